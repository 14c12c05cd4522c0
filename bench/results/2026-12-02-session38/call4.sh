#!/usr/bin/env bash
# Session 38, call 4 (carry .carry-new of the tree with rgpud --wait-spin-us): loops two deep,
# `tiny`: which threads spin while four tenants take turns (top, threads over 30% of a CPU,
# once a second), then whether waits that stop spinning lift fair's total: rgpud's waits
# (--wait-spin-us=100: poll 100 us, then the completion watcher) and the clients'
# (RGPU_SPIN_US=50), fifo beside each.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
(top -b -H -d 1 -n 120 -w 200 | awk '/^top -/{n++; printf "\n[%d]", n} $1 ~ /^[0-9]+$/ && $9+0 > 30 {printf " %s:%d", $12, $9}' > $OUT/top.txt) &
tp=$!
timeout 250 bash bench/sharing_on_device.sh .carry-new $OUT/a --matrix --equal --be-depth 2 \
  --be-kinds tiny --modes fair,fifo,fair/--wait-spin-us=100 \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/a.log 2>&1
echo "a rc=$?"
kill $tp 2>/dev/null
grep -E "^\[" $OUT/top.txt | awk '{print NF-1, $0}' | cut -c1-300 | head -70
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/a/sharing.md | grep -E "^\||^- "
RGPU_SPIN_US=50 timeout 250 bash bench/sharing_on_device.sh .carry-new $OUT/b --matrix --equal --be-depth 2 \
  --be-kinds tiny --modes fifo,fair,fair/--wait-spin-us=100 \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/b.log 2>&1
echo "b (RGPU_SPIN_US=50) rc=$?"
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/b/sharing.md | grep -E "^\||^- "
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*/rgpud-logs.tar.gz $OUT/*.log
