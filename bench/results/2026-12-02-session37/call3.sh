#!/usr/bin/env bash
# Session 37, call 3 (carry .carry-new of 99e5a33: direct launches in a turn up to a slice, any
# waves; call 1's sharing.json as native-sharing.json): equal tenants one deep (--be-depth 1)
# and two deep (the default), fifo, fair, fair+shared.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for d in 1 2; do
  timeout 280 bash bench/sharing_on_device.sh .carry-new $OUT/d$d --matrix --equal --be-depth $d \
    --be-kinds membound,tiny,brief,short --modes fifo,fair,fair+shared \
    --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/d$d.log 2>&1
  echo "d$d rc=$?"
  sed -n '/## Matrix equal/,/## Accounting/p' $OUT/d$d/sharing.md
done
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt
