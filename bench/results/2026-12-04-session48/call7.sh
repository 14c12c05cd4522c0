#!/usr/bin/env bash
# Session 48, call 7 (carry .carry-lab of 85b7f37 plus bench/rgpu-probe-queues, and .lab-deps;
# the lab built on the GPU machine from this tree, whose OpenCL worker now finishes its queue
# before it waits for a kernel's event): natively, what a finished queue's event says at once
# (status, profiling times); then seed 000's tables 4-7 (persistent) under fair with a context
# group (none completed in sessions 44 and 47) and under fair, 3 rounds, the seed's settings.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
env OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=.carry-lab/lib timeout 60 .carry-lab/rgpu-probe-queues \
    --platform NVIDIA --release-ms 500 --max-polls 8000000 --settle-ms 50 > $OUT/native-waits.json 2>&1
echo "probe rc=$?"; grep '"wait"' $OUT/native-waits.json
LAB_COMMIT=$(cat .carry-lab/COMMIT)+worker-finish TOTAL_BUDGET=260 STEP_TIMEOUT=130 bash lab/tools/on_device.sh /tmp/r \
    seed000-persistent:rgpu:--policy=fair,--context-group \
    seed000-persistent:rgpu:--policy=fair 2>&1 | grep -E "^==|rc=|persistent x|FAILED|ERROR" | head -50
for f in $(find /tmp/r -name results.json); do echo "$f: $(grep -o '"stopped_by": *"[a-z_]*"' $f | sort | uniq -c | tr '\n' ' ')"; done
tar czf $OUT/lab.tar.gz -C /tmp/r .
