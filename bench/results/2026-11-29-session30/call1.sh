#!/usr/bin/env bash
# Session 30, call 1 (carry .carry-new = db8af28's build): the launch rate with launches as
# applications other than the benchmark make them (rgpu-bench-overhead --async-shape): plain,
# events (each launch asks for an event, released at once), args (four arguments set before
# each launch), pyopencl (both); bursts of 100 and of 100,000; two invocations of each, every
# invocation timing three rounds per path (native, rgpud unix, rgpud TCP), alternating.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c1 && rm -rf $W && mkdir -p $W
for round in 1 2; do
  for n in 100 100000; do
    for shape in plain events args pyopencl; do
      timeout 100 bash bench/on_device.sh .carry-new $W/n$n-r$round-$shape --tasks async --no-links \
        --iterations 100 --async-launches $n --async-rounds 3 --async-shape $shape \
        --worker-timeout 90 > /dev/null 2>&1
      echo "n$n r$round $shape rc=$?"
    done
  done
done
python3 bench/results/2026-11-29-session29/pool_rates.py $W
rm -f $W/*/rgpud-*.log
(cd /tmp && tar czf $OUT/c1.tar.gz c1)
