#!/usr/bin/env bash
# Session 37, call 1 (carry .carry-new): equal tenants whose loops wait for each launch before
# the next (--be-depth 1: launch, flush, clWaitForEvents), the commonest application loop, for
# the kinds of short launches and `short`; native, fifo, fair, fair+shared side by side.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 480 bash bench/sharing_on_device.sh .carry-new $OUT/d1 --matrix --equal --be-depth 1 \
  --be-kinds tiny,brief,membound,short --modes native,fifo,fair,fair+shared \
  --duration 2.5 --timeout 25 > $OUT/d1.log 2>&1
echo "d1 rc=$?"
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/d1/sharing.md
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt
