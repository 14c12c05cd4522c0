#!/usr/bin/env bash
# Session 37, call 7 (carry .carry-new of f5a6c9f: direct in a turn also behind the tenant's gated
# launches already let go on its queue): loops two deep, fifo and fair.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 200 bash bench/sharing_on_device.sh .carry-new $OUT/d2 --matrix --equal --be-depth 2 \
  --be-kinds tiny,brief,membound --modes fifo,fair \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/d2.log 2>&1
echo "d2 rc=$?"
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/d2/sharing.md | grep -E "^\||^- "
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*/rgpud-logs.tar.gz $OUT/*.log
