#!/usr/bin/env bash
# Session 37, call 6 (carry .carry-new of 94ac509, as call 5): call 5's one miss (4 `tiny`
# tenants two deep under `fair`, 0.80 of fifo) and the one-deep `membound` figure again,
# fifo and fair only.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for d in 1 2; do
  timeout 130 bash bench/sharing_on_device.sh .carry-new $OUT/d$d --matrix --equal --be-depth $d \
    --be-kinds tiny,membound --modes fifo,fair \
    --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/d$d.log 2>&1
  echo "d$d rc=$?"
  sed -n '/## Matrix equal/,/## Accounting/p' $OUT/d$d/sharing.md | grep -E "^\||^- "
done
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*/rgpud-logs.tar.gz $OUT/*.log
