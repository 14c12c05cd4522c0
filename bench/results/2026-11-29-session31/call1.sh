#!/usr/bin/env bash
# Session 31, call 1 (.carry-new = 0155399 + the probe's kept variants): what a launch whose
# event the application keeps costs. rgpu-probe-driver --events three times (NVIDIA natively:
# kept events on a queue with and without profiling, and the twin-queue scheme), then
# rgpu-bench-overhead --async-shape kept, bursts of 100 and 100,000, three invocations each
# (three rounds per path in each), and plain once per size as a check. (The first attempt
# ran the probe without the ICD loader's vendors; it was rerun alone: PROBE_ONLY=1.)
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
for i in 1 2 3; do
  OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$PWD/.carry-new/lib timeout 60 .carry-new/bench/rgpu-probe-driver --platform NVIDIA --events --count 20000 > $OUT/probe-events-$i.json
  echo "probe $i rc=$?"
done
[ -n "${PROBE_ONLY:-}" ] && exit 0
W=/tmp/c1 && rm -rf $W && mkdir -p $W
for round in 1 2 3; do
  for n in 100 100000; do
    for shape in kept plain; do
      [ $shape = plain ] && [ $round != 1 ] && continue
      timeout 100 bash bench/on_device.sh .carry-new $W/n$n-r$round-$shape --tasks async --no-links \
        --iterations 100 --async-launches $n --async-rounds 3 --async-shape $shape \
        --worker-timeout 90 > /dev/null 2>&1
      echo "n$n r$round $shape rc=$?"
    done
  done
done
python3 bench/results/2026-11-29-session29/pool_rates.py $W | tee $OUT/pooled.md
rm -f $W/*/rgpud-*.log
(cd /tmp && tar czf $OUT/c1.tar.gz c1)
