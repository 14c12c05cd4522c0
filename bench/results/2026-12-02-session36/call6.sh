#!/usr/bin/env bash
# Session 36, call 6 (carry .carry-new, call 1's sharing.json as native-sharing.json): direct
# launches in a turn (--direct-in-turn, on) against held ones, side by side, for the kinds of
# short launches (tiny, brief: one wave; membound: many waves, not direct), alone, 2 and 4.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 300 bash bench/sharing_on_device.sh .carry-new $OUT/eq --matrix --equal --be-kinds tiny,brief,membound \
  --modes fifo,fair,fair/--direct-in-turn=0,fair+shared,fair+shared/--direct-in-turn=0 \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/eq.log 2>&1
echo "eq rc=$?"
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/eq/sharing.md
sed -n '/## Accounting/,/^"all"/p' $OUT/eq/sharing.md | grep -E "tiny|brief|all" | head -40
rm -f $OUT/*/rgpud-logs.tar.gz $OUT/*/device-log.txt $OUT/*/progress.txt
