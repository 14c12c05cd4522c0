#!/usr/bin/env bash
# Session 31, call 2: launches with the application's events on an unprofiled twin of the
# queue ("on": .carry-new, this session's build, default) against the same build with
# --twin-queues=0 ("off": every launch on the profiling queue, as 0155399). Shapes kept,
# events and pyopencl in two rounds, plain and args in one; bursts of 100 and 100,000;
# variants alternate; each invocation times three rounds per path.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c2 && rm -rf $W && mkdir -p $W
for round in 1 2; do
  for n in 100 100000; do
    for shape in kept events pyopencl plain args; do
      case $shape in plain|args) [ $round = 2 ] && continue ;; esac
      for v in on off; do
        extra=()
        [ $v = off ] && extra=(--rgpud-arg=--twin-queues=0)
        timeout 100 bash bench/on_device.sh .carry-new $W/n$n-r$round-$shape-$v --tasks async --no-links \
          --iterations 100 --async-launches $n --async-rounds 3 --async-shape $shape \
          --worker-timeout 90 "${extra[@]}" > /dev/null 2>&1
        echo "n$n r$round $shape $v rc=$?"
        grep -ho "launches through its launch thread ([^)]*)" $W/n$n-r$round-$shape-$v/rgpud-*.log | sort | uniq -c | head -3
      done
    done
  done
done
python3 bench/results/2026-11-29-session29/pool_rates.py $W | tee $OUT/pooled.md
rm -f $W/*/rgpud-*.log
(cd /tmp && tar czf $OUT/c2.tar.gz c2)
