#!/usr/bin/env bash
# Session 30, call 2: launches with the application's events through the launch thread
# ("new", .carry-new = 0a7030b) against db8af28's rgpud ("old", .carry-old), and the new build with
# --launch-thread=0 ("none": only the accounting's sampling of such events changed), on the
# shapes of call 1 that involve events (events, pyopencl) and plain as a check; bursts of 100
# and of 100,000; two rounds, alternating; each invocation times three rounds per path.
set -u
# .carry-old holds db8af28's rgpud only (the ICD and the benchmark did not change since).
for d in bench client icd lib; do [ -e .carry-old/$d ] || cp -r .carry-new/$d .carry-old/; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c2 && rm -rf $W && mkdir -p $W
for round in 1 2; do
  for n in 100 100000; do
    for shape in events pyopencl plain; do
      for v in new old none; do
        [ $v = none ] && [ $shape != events ] && continue
        c=.carry-new; o=1
        [ $v = old ] && c=.carry-old
        [ $v = none ] && o=0
        timeout 100 bash bench/on_device.sh $c $W/n$n-r$round-$shape-$v --tasks async --no-links \
          --iterations 100 --async-launches $n --async-rounds 3 --async-shape $shape \
          --worker-timeout 90 --rgpud-arg=--launch-thread=$o > /dev/null 2>&1
        echo "n$n r$round $shape $v rc=$?"
      done
    done
  done
done
python3 bench/results/2026-11-29-session29/pool_rates.py $W
grep -h "launch thread" $W/*/rgpud-*.log | grep -o "[0-9]* launches through.*" | sort | uniq -c | sort -rn | head -5
rm -f $W/*/rgpud-*.log
(cd /tmp && tar czf $OUT/c2.tar.gz c2)
