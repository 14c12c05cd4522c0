#!/usr/bin/env bash
# Session 30, call 3: the launch thread's events entered as it makes them, one in 32 a
# checkpoint ("new", .carry-new = 3b786b3), against 0a7030b's rgpud ("old", .carry-old:
# entered at the end of a burst, each a checkpoint); shapes events and pyopencl, bursts of
# 100 and of 100,000; two rounds, alternating; each invocation times three rounds per path.
set -u
# .carry-old holds 0a7030b's rgpud only (the ICD and the benchmark did not change since).
for d in bench client icd lib; do [ -e .carry-old/$d ] || cp -r .carry-new/$d .carry-old/; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c3 && rm -rf $W && mkdir -p $W
for round in 1 2; do
  for n in 100 100000; do
    for shape in events pyopencl; do
      for v in new old; do
        c=.carry-new
        [ $v = old ] && c=.carry-old
        timeout 100 bash bench/on_device.sh $c $W/n$n-r$round-$shape-$v --tasks async --no-links \
          --iterations 100 --async-launches $n --async-rounds 3 --async-shape $shape \
          --worker-timeout 90 --rgpud-arg=--launch-thread=1 > /dev/null 2>&1
        echo "n$n r$round $shape $v rc=$?"
      done
    done
  done
done
python3 bench/results/2026-11-29-session29/pool_rates.py $W
rm -f $W/*/rgpud-*.log
(cd /tmp && tar czf $OUT/c3.tar.gz c3)
