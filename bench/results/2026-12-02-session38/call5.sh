#!/usr/bin/env bash
# Session 38, call 5 (carry .carry-new of the tree whose threads name themselves): loops two
# deep, `tiny`, fair only: which of rgpud's and the clients' threads spin while four tenants
# take turns (top -H every half second, threads over 20% of a CPU, by name).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
(top -b -H -d 0.5 -n 200 -w 200 | awk '/^top -/{n++; printf "\n[%d]", n} $1 ~ /^[0-9]+$/ && $9+0 > 20 {printf " %s:%d", $12, $9}' > $OUT/top.txt) &
tp=$!
timeout 200 bash bench/sharing_on_device.sh .carry-new $OUT/a --matrix --equal --be-depth 2 \
  --be-kinds tiny --modes fair \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/a.log 2>&1
echo "a rc=$?"
kill $tp 2>/dev/null
grep -E "^\[" $OUT/top.txt | awk '{print NF-1, $0}' | cut -c1-400 | head -90
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/a/sharing.md | grep -E "^\||^- "
tail -5 $OUT/a.log; rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*/rgpud-logs.tar.gz $OUT/*.log
