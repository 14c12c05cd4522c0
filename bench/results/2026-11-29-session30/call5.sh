#!/usr/bin/env bash
# Session 30, call 5: events released at once taken back out of their launch requests by
# the client ("new", .carry-new = 675973c: ICD and rgpud) against b60b7ec ("old", .carry-old:
# its ICD and rgpud); shapes events and pyopencl (two rounds) and plain (one), bursts of 100 and 100,000; two
# rounds, alternating; each invocation times three rounds per path. The launch thread is on
# (the default on this 16-CPU machine).
set -u
for d in bench icd lib; do [ -e .carry-old/$d ] || cp -r .carry-new/$d .carry-old/; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c5 && rm -rf $W && mkdir -p $W
for round in 1 2; do
  for n in 100 100000; do
    for shape in events pyopencl plain; do
      for v in new old; do
        [ $shape = plain ] && [ $round = 2 ] && continue  # a check only: one round
        c=.carry-new
        [ $v = old ] && c=.carry-old
        timeout 100 bash bench/on_device.sh $c $W/n$n-r$round-$shape-$v --tasks async --no-links \
          --iterations 100 --async-launches $n --async-rounds 3 --async-shape $shape \
          --worker-timeout 90 > /dev/null 2>&1
        echo "n$n r$round $shape $v rc=$?"
      done
    done
  done
done
python3 bench/results/2026-11-29-session29/pool_rates.py $W
rm -f $W/*/rgpud-*.log
(cd /tmp && tar czf $OUT/c5.tar.gz c5)
