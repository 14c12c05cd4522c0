#!/usr/bin/env bash
# Session 32, call 4 (carry .carry-new: this session's build after the revert, whose rgpud is
# 840d1de's). Session 31 measured the unprofiled twins (call 2 there) with the twin taking
# launches after one evented launch; 7c208cd made it eight in a row, not measured on a GPU.
# Twins on (default) against --twin-queues=0, alternating; kept in two rounds, events in one;
# bursts of 100 and 100,000; each invocation times three rounds per path.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c4 && rm -rf $W && mkdir -p $W
for round in 1 2; do
  for n in 100 100000; do
    for shape in kept events; do
      [ $shape = events ] && [ $round = 2 ] && continue
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
(cd /tmp && tar czf $OUT/c4.tar.gz c4)
