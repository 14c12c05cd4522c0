#!/usr/bin/env bash
# Session 32, call 1 (carry .carry-new: HEAD 840d1de's build). Where the time goes, with
# request stamps (proto/stamps.h), in the two shapes that miss by the least:
#  A. issue 12: bursts of 100 launches whose events the application keeps, against plain
#     bursts (bench/stamps_bursts.py);
#  B. issue 15: the matrix's `tiny` BE tenant beside the Poisson 370 us LC under fair+shared,
#     with the completion watcher and dispatcher spinning (default on 16 CPUs) and without
#     (--spin-feed=0), two rounds alternating, against one native pass (bench/stamps_waits.py).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
N=.carry-new
W=/tmp/c1 && rm -rf $W && mkdir -p $W/keep
for shape in kept plain; do
  rm -rf /tmp/st && mkdir -p /tmp/st
  RGPU_STAMPS=/tmp/st/s timeout 100 bash bench/on_device.sh $N $W/b-$shape --tasks async --no-links \
    --iterations 100 --async-launches 100 --async-rounds 1 --async-shape $shape --worker-timeout 90 \
    > /dev/null 2>&1
  echo "bursts $shape rc=$?"
  grep -A6 "^### Asynchronous" $W/b-$shape/*.md | grep "^|" | head -6
  python3 bench/stamps_bursts.py /tmp/st > $W/b-$shape/stamps.md 2>&1
  cat $W/b-$shape/stamps.md | head -60
  (cd /tmp && tar czf $W/keep/st-$shape.tar.gz st)
done
S=mx_poisson_370_tiny
timeout 120 bash bench/sharing_on_device.sh $N $W/nat --matrix --scenarios $S --modes native \
  --solo-repeats 1 --duration 2.5 --timeout 25 > /dev/null 2>&1
echo "native rc=$?"
for round in 1 2; do
  for v in on off; do
    m=fair+shared; [ $v = off ] && m=fair+shared/--spin-feed=0
    rm -rf /tmp/st && mkdir -p /tmp/st
    RGPU_STAMPS=/tmp/st/s timeout 120 bash bench/sharing_on_device.sh $N $W/r$round-$v --matrix \
      --scenarios $S --modes $m --baseline $W/nat/sharing.json --duration 2.5 --timeout 25 \
      > /dev/null 2>&1
    echo "round $round spin $v rc=$?"
    grep '^| `mx_' $W/r$round-$v/sharing.md | grep -v "^| \`mx_lc\|^| \`mx_be" | head -3
    c=""; s=""
    for f in $(ls -S /tmp/st); do
      if grep -q '^20 ' /tmp/st/$f; then [ -z "$c" ] && c=/tmp/st/$f
      elif grep -q '^13 ' /tmp/st/$f; then [ -z "$s" ] && s=/tmp/st/$f; fi
    done
    python3 bench/stamps_waits.py $c $s > $W/r$round-$v/waits.md 2>&1
    cat $W/r$round-$v/waits.md
    mkdir -p /tmp/lg && tar -xzf $W/r$round-$v/rgpud-logs.tar.gz -C /tmp/lg 2>/dev/null
    grep -rh 'scheduling' /tmp/lg | cut -c1-330; rm -rf /tmp/lg
    cp $c $W/keep/client-r$round-$v; cp $s $W/keep/server-r$round-$v
  done
done
rm -f $W/*/rgpud-*.log
(cd /tmp && tar czf $OUT/raw.tar.gz c1/keep)
rm -rf $W/keep
(cd /tmp && tar czf $OUT/c1.tar.gz c1)
