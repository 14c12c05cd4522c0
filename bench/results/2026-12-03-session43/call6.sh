#!/usr/bin/env bash
# Session 43, call 6 (carry as call 2): in call 3's slow rgpud processes all of Submit ran
# slower, not only the driver's enqueue (ChooseEvent 1.4-1.9 µs at p50 against 0.4-1.1): a
# thread on cold caches? The periodic 370 µs LC alone under `fair`, rgpud as it is against
# rgpud held to one CPU (--pin-cpu 3, every thread of it there), three rounds alternating,
# with request stamps; the finer steps inside Submit from the raw files.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c6 && rm -rf $W && mkdir -p $W
steps() {  # the steps inside Submit, p50/p90/p99 µs, from rgpud's stamp file
python3 - "$1" <<'PY'
import sys
seq, cur = [], None
for l in open(sys.argv[1]):
    p, a, n = (int(x) for x in l.split())
    if p == 17: cur = {17: n}
    elif cur is not None and p in (33, 34, 35, 18):
        cur.setdefault(p, n)
        if p == 18: seq.append(cur); cur = None
seq = [s for s in seq if all(k in s for k in (17, 33, 34, 35, 18))][-600:]
q = lambda xs, f: sorted(xs)[int(f * (len(xs) - 1))]
out = []
for a, b, name in ((17, 33, 'submit->direct'), (33, 34, 'choose'), (34, 35, 'driver launch'), (35, 18, 'after')):
    xs = [(s[b] - s[a]) / 1e3 for s in seq]
    out.append(f"{name} {q(xs,.5):.1f}/{q(xs,.9):.1f}/{q(xs,.99):.1f}")
print('  steps:', ' | '.join(out))
PY
}
for round in 1 2 3; do
  for v in free pin; do
    tag=$v-$round
    mode=fair; [ $v = pin ] && mode=fair/--pin-cpu=3
    mkdir -p $W/st-$tag
    RGPU_STAMPS=$W/st-$tag/s timeout 100 bash bench/sharing_on_device.sh .carry-new $W/$tag --matrix \
      --modes $mode --scenarios mx_lc_periodic_370 --baseline .carry-new/native-matrix.json \
      --duration 2.5 --timeout 25 > $W/$tag.log 2>&1
    echo "== $tag rc=$? $(grep -E '^\| `mx_lc' $W/$tag/sharing.md | head -1)"
    srv=$(grep -l '^13 ' $W/st-$tag/s.* | head -1)
    cli=$(grep -L '^13 ' $W/st-$tag/s.* | xargs grep -l '^1 ' | tail -1)
    python3 bench/stamps.py $cli $srv 600 | grep -E "driver enqueue|TOTAL|blocking read"
    steps $srv
  done
done 2>&1 | tee $OUT/pin.txt
(cd /tmp && tar czf $OUT/c6.tar.gz c6/st-*)
