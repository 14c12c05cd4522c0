#!/usr/bin/env bash
# Session 35, call 9 (carry .carry-new): one BE tenant alone, every kind, under fifo, fair and
# fair+shared (issue 15: fair within 3% of fifo alone), against call 6's native runs (its
# sharing.json as .carry-new/native-sharing.json).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 150 bash bench/sharing_on_device.sh .carry-new $OUT/solo --matrix \
  --modes fifo,fair,fair+shared --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 \
  --scenarios mx_be_short,mx_be_membound,mx_be_long,mx_be_opaque,mx_be_brief,mx_be_tiny > $OUT/solo.log 2>&1
echo "solo rc=$?"
grep -E "^\[.*(fifo|fair).*mx_be" $OUT/solo.log | sed -E 's/.*\] +[0-9]+\/[0-9]+ //' | cut -c1-100
rm -f $OUT/solo/rgpud-logs.tar.gz $OUT/solo/device-log.txt
