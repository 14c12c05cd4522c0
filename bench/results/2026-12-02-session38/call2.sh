#!/usr/bin/env bash
# Session 38, call 2 (carry as call 1): loops two deep, `tiny` and `brief`; whether the poll
# slots (--max-pollers: a quarter of the CPUs, best-effort sessions at most half of them, so 2
# of 4 BE sessions poll on 16 CPUs) or the launch thread for held loops decide call 1's miss.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 500 bash bench/sharing_on_device.sh .carry-new $OUT/d2 --matrix --equal --be-depth 2 \
  --be-kinds tiny,brief \
  --modes fifo,fair,fifo/--max-pollers=16,fair/--max-pollers=16,fair/--max-pollers=16/--pipe-loops=0,fair/--pipe-loops=0,fair:32000 \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/d2.log 2>&1
echo "d2 rc=$?"
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/d2/sharing.md | grep -E "^\||^- "
grep -E "^\| (fifo|fair)" $OUT/d2/sharing.md | grep "equal4_tiny" | head -40
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*/rgpud-logs.tar.gz $OUT/*.log
