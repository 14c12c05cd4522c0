#!/usr/bin/env bash
# Session 32, call 5 (carry .carry-new: ebf4154 plus the scheduler's stamps inside a held
# launch that goes at once, proto/stamps.h points 26-32). The `tiny` BE tenant beside the
# Poisson 370 us LC under fair+shared, with request stamps, default and --spin-feed=0:
# where rgpud's 21-27 us from a launch frame to its enqueue go (bench/stamps_held.py), and the
# loop's turns (bench/stamps_waits.py).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c5 && rm -rf $W && mkdir -p $W
S=mx_poisson_370_tiny
for m in fair+shared fair+shared/--spin-feed=0; do
  d=$W/$(echo $m | tr '/+=' '_p_')
  rm -rf /tmp/st && mkdir -p /tmp/st
  RGPU_STAMPS=/tmp/st/s timeout 120 bash bench/sharing_on_device.sh .carry-new $d --matrix \
    --scenarios $S --modes $m --duration 2.5 --timeout 25 --solo-repeats 1 > /dev/null 2>&1
  echo "$m rc=$?"
  c=""; s=""
  for f in $(ls -S /tmp/st); do
    if grep -q '^20 ' /tmp/st/$f; then [ -z "$c" ] && c=/tmp/st/$f
    elif grep -q '^26 ' /tmp/st/$f; then [ -z "$s" ] && s=/tmp/st/$f; fi
  done
  python3 bench/stamps_held.py $s | tee $d/held.md
  python3 bench/stamps_waits.py $c $s | tee $d/waits.md
done
(cd /tmp && tar czf $OUT/c5.tar.gz c5)
