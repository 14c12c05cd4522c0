#!/usr/bin/env bash
# Session 36, call 7 (carry .carry-new of 6d4f9c9, call 1's sharing.json as
# native-sharing.json): the final build's equal tenants of every kind under fifo and fair (device time left allowed no more;
# fair+shared in call 6) (docs/scheduling.md's generated table).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 200 bash bench/sharing_on_device.sh .carry-new $OUT/eq --matrix --equal \
  --modes fifo,fair --baseline .carry-new/native-sharing.json \
  --duration 2.5 --timeout 25 > $OUT/eq.log 2>&1
echo "eq rc=$?"
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/eq/sharing.md
rm -f $OUT/*/rgpud-logs.tar.gz $OUT/*/device-log.txt $OUT/*/progress.txt
