#!/usr/bin/env bash
# Session 37, call 2 (carry .carry-new, call 1's sharing.json as native-sharing.json): `fair`
# with closed loops one deep lost 10% against fifo for `membound` (call 1). The turn's wait for
# its tenant's next launch, side by side: 100 us (default), 300 us, 1 ms, and turns off.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 400 bash bench/sharing_on_device.sh .carry-new $OUT/tw --matrix --equal --be-depth 1 \
  --be-kinds membound,tiny --modes fifo,fair,fair/--turn-wait-us=300,fair/--turn-wait-us=1000,fair/--be-turns=0 \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/tw.log 2>&1
echo "tw rc=$?"
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/tw/sharing.md
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt
