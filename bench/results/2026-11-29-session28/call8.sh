#!/usr/bin/env bash
# Session 28, call 8: does NVIDIA's enqueue cost more in a context with more queues (rgpud's
# `fair` adds its own two beside the application's)? rgpu-probe-driver three times (the new
# launch_no_event_two_more_queues figure beside launch_no_event); then rgpud --policy fair
# (default) against fifo, alternating, three rounds of 100,000 launches (bench/ab_on_device.sh).
set -u
N=.carry-new
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for r in 1 2 3; do
  OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/bench/rgpu-probe-driver --platform NVIDIA --count 100000 > $OUT/probe$r.json 2>&1
  grep -E '"launch_no_event' $OUT/probe$r.json
done
timeout 280 bash bench/ab_on_device.sh $N /tmp/abq 3 100000 fair=--policy=fair fifo=--policy=fifo > /dev/null 2>&1
echo "abq rc=$?"; cat /tmp/abq/summary.md | tee $OUT/ab-fair-fifo.md
