#!/usr/bin/env bash
# Session 36, call 3 (carry .carry-new, with call 1's sharing.json as native-sharing.json):
# equal best-effort tenants again after best-effort turns (--be-turns, on by default), against
# call 1's native runs: fifo; fair (turns); fair with a 100 us wait for the turn's next launch;
# fair without turns (as call 1); fair+shared (turns).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 560 bash bench/sharing_on_device.sh .carry-new $OUT/eq --matrix --equal \
  --modes fifo,fair,fair/--turn-wait-us=100,fair/--be-turns=0,fair+shared \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/eq.log 2>&1
echo "eq rc=$?"
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/eq/sharing.md
tar xzf $OUT/eq/rgpud-logs.tar.gz -O 2>/dev/null | grep -E "tenant t[0-3] scheduling" > $OUT/eq-usage.txt
rm -f $OUT/eq/rgpud-logs.tar.gz $OUT/eq/device-log.txt
