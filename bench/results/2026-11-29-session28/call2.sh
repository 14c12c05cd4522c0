#!/usr/bin/env bash
# Session 28, call 2: the launch rate, old (b700dc8: .carry-old) against new (this session's
# rgpud and ICD: .carry-new), alternating, and the new ICD with RGPU_WRITE_THROUGH=0 (the
# socket path gathering as before); bursts of 100 (101 per run, median burst) and of 100,000,
# three runs per path per invocation; then stamps of bursts of 100 with the new build; then
# the `tiny` BE tenant alone and beside the Poisson 370 us LC under fair, old and new.
set -u
# .carry-old travels with rgpud and the ICD only: the rest is the same as .carry-new's.
for d in bench lib icd; do [ -e .carry-old/$d ] || cp -r .carry-new/$d .carry-old/; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
summary=$OUT/summary.md
echo "| round | variant | launches | native | unix | tcp | unix / native | tcp / native |" > $summary
echo "|---|---|---:|---:|---:|---:|---:|---:|" >> $summary
for round in 1 2 3; do
  for v in old new new-wt0; do
    case $v in old) C=.carry-old; E="";; new) C=.carry-new; E="";; new-wt0) C=.carry-new; E="RGPU_WRITE_THROUGH=0";; esac
    for n in 100 100000; do
      d=$OUT/ab/r$round-$v-$n
      env $E timeout 150 bash bench/on_device.sh $C $d --tasks async --async-launches $n --async-rounds 3 \
        --no-links --worker-timeout 100 > /dev/null 2>&1
      python3 - $d/overhead.json $round $v $n >> $summary <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
rate = lambda k: runs.get(k, {}).get("async", {}).get("launches_per_s", 0.0)
n, u, t = rate("native"), rate("rgpu_unix"), rate("rgpu_tcp")
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {n:.0f} | {u:.0f} | {t:.0f} | {u / n if n else 0:.3f} | {t / n if n else 0:.3f} |")
PY
      rm -f $d/rgpud-*.log $d/device-log.txt $d/progress.txt
    done
  done
done
cat $summary
for r in 1 2; do
  rm -rf /tmp/st && mkdir -p /tmp/st
  RGPU_STAMPS=/tmp/st/s timeout 150 bash bench/on_device.sh .carry-new $OUT/st$r --tasks async --async-launches 100 \
    --async-rounds 1 --no-links --worker-timeout 100 > /dev/null 2>&1
  echo "st$r rc=$?"; grep -A6 'Asynchronous launches' $OUT/st$r/overhead.md
  python3 bench/stamps_bursts.py /tmp/st | tee $OUT/st$r-bursts.md
  rm -f $OUT/st$r/rgpud-*.log $OUT/st$r/device-log.txt $OUT/st$r/progress.txt
done
for v in old new; do
  C=.carry-$v
  timeout 150 bash bench/sharing_on_device.sh $C $OUT/tiny-$v --matrix \
    --scenarios mx_be_tiny,mx_lc_poisson_370,mx_poisson_370_tiny --modes native,fair --duration 3 --timeout 25 > /dev/null 2>&1
  echo "tiny-$v rc=$?"; grep -A8 'solo runs' $OUT/tiny-$v/sharing.md | grep '^|'; grep -B2 -A6 'poisson_370_tiny' $OUT/tiny-$v/sharing.md | grep '^|' | head -8
  rm -f $OUT/tiny-$v/device-log.txt $OUT/tiny-$v/progress.txt
done
