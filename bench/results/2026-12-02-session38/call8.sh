#!/usr/bin/env bash
# Session 38, call 8 (carry as call 5): loops two deep, `tiny` and `membound`, fair's quantum at
# 8 (the default), 16 and 32 ms, fifo beside (calls 2-3 on an H100: 32 ms lifted four `tiny`
# tenants from 0.67 to 0.76 and from 0.80 to 0.84 of one alone natively).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 185 bash bench/sharing_on_device.sh .carry-new $OUT/a --matrix --equal --be-depth 2 \
  --be-kinds tiny,membound --modes fifo,fair,fair:16000,fair:32000 \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/a.log 2>&1
echo "a rc=$?"
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/a/sharing.md | grep -E "^\||^- "
tail -3 $OUT/a.log; rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*/rgpud-logs.tar.gz $OUT/*.log
