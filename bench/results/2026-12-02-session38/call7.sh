#!/usr/bin/env bash
# Session 38, call 7 (carry as call 5): loops two deep, `tiny`: rgpud's waits for events polled
# for 500 us or 2 ms and then handed to the completion watcher (--wait-spin-us), against the
# driver's blocking wait (call 6: NVIDIA's spins, and with it a thread of the driver per
# context), fifo beside; rgpud's threads over 20% of a CPU once a second.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
(top -b -H -d 1 -n 150 -w 200 | awk '/^top -/{n++; printf "\n[%d]", n} /^%Cpu/{printf " us:%s sy:%s", $2, $4} $1 ~ /^[0-9]+$/ && $9+0 > 20 {printf " %s:%d", $12, $9}' > $OUT/top.txt) &
tp=$!
timeout 300 bash bench/sharing_on_device.sh .carry-new $OUT/a --matrix --equal --be-depth 2 \
  --be-kinds tiny --modes fifo,fair,fair/--wait-spin-us=2000,fair/--wait-spin-us=500 \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/a.log 2>&1
echo "a rc=$?"
kill $tp 2>/dev/null
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/a/sharing.md | grep -E "^\||^- "
grep -E "^\[" $OUT/top.txt | awk 'NF>3' | cut -c1-330 | head -60
tail -3 $OUT/a.log; rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*/rgpud-logs.tar.gz $OUT/*.log
