#!/usr/bin/env bash
# Session 38, call 1 (carry .carry-new of HEAD, session 37's final scheduling): session 37's one
# miss, 4 `tiny` tenants two deep under `fair` (0.79-0.80 of fifo), with one mechanism off or
# changed per mode, to find where the device goes.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 400 bash bench/sharing_on_device.sh .carry-new $OUT/d2 --matrix --equal --be-depth 2 \
  --be-kinds tiny \
  --modes fifo,fair,fair/--gate-chained=0/--gate-first=0,fair/--turn-wait-us=500,fair/--quantum-us=32000,fair/--direct-in-turn=0,fair/--pipe-loops=0 \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/d2.log 2>&1
echo "d2 rc=$?"
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/d2/sharing.md | grep -E "^\||^- "
grep -E "^\| (fifo|fair)" $OUT/d2/sharing.md | grep equal4 | head -40
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*/rgpud-logs.tar.gz $OUT/*.log
