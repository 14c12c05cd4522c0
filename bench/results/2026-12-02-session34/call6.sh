#!/usr/bin/env bash
# Session 34, call 6 (carry .carry-new, 031e201, call 4's sharing.json as --baseline). Does a
# context group's device context slow down with the sessions it has served? The `tiny` tenant
# alone under fair+shared as the first session of a fresh rgpud, then after the five other BE
# kinds alone in the same rgpud (and the same under fair, a context per session), twice.
set -u
mkdir -p /tmp/c6
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for pass in 1 2; do
  timeout 60 bash bench/sharing_on_device.sh .carry-new /tmp/c6/first$pass --matrix --modes fair+shared,fair \
    --baseline .carry-new/native-sharing.json --scenarios mx_be_tiny --duration 2.5 --timeout 25 > $OUT/first$pass.log 2>&1
  echo "first$pass rc=$?"; grep "mx_be_tiny" $OUT/first$pass.log | grep done
  timeout 100 bash bench/sharing_on_device.sh .carry-new /tmp/c6/last$pass --matrix --modes fair+shared,fair \
    --baseline .carry-new/native-sharing.json \
    --scenarios mx_be_membound,mx_be_short,mx_be_long,mx_be_opaque,mx_be_brief,mx_be_tiny --duration 2.5 --timeout 25 > $OUT/last$pass.log 2>&1
  echo "last$pass rc=$?"; grep "done in" $OUT/last$pass.log
done
