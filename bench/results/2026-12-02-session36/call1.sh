#!/usr/bin/env bash
# Session 36, call 1 (carry .carry-new): equal best-effort tenants of every BE kind (each alone,
# 2 and 4 of it) natively, under fifo, fair and fair+shared: does sharing waste device time
# (issue 15: 2-4 equal tenants together at least 95% of fifo; one alone within 3% of fifo)?
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 540 bash bench/sharing_on_device.sh .carry-new $OUT/eq --matrix --equal \
  --modes native,fifo,fair,fair+shared --solo-repeats 2 --duration 2.5 --timeout 25 > $OUT/eq.log 2>&1
echo "eq rc=$?"
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/eq/sharing.md
grep "scheduling (fair)" $OUT/eq/progress.txt | head -0
tar xzf $OUT/eq/rgpud-logs.tar.gz -O 2>/dev/null | grep -E "tenant t[0-3] scheduling" | head -60 > $OUT/eq-usage.txt
rm -f $OUT/eq/rgpud-logs.tar.gz $OUT/eq/device-log.txt
