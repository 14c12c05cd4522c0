#!/usr/bin/env bash
# Session 38, call 6 (carry as call 5): four `tiny` tenants two deep under fair; a second into
# the run, rgpud's threads over 20% of a CPU (top -H) and, where gdb is present, every
# thread's stack: which threads spin (call 5: two threads named rgpud-session per tenant, at
# 92-99% each, but one while a tenant is alone).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
command -v gdb eu-stack perf pstack
(
  for i in $(seq 1 60); do
    sleep 0.5
    pid=$(pgrep -x rgpud | head -1)
    [ -n "$pid" ] || continue
    n=$(ls /proc/$pid/task | wc -l)
    [ "$n" -gt 30 ] || continue   # four sessions up
    sleep 1.5
    top -b -H -n 1 -d 0.5 -p $pid -w 200 | head -40 > $OUT/top-rgpud.txt
    if command -v gdb >/dev/null; then
      timeout 60 gdb -q -batch -p $pid -ex "set pagination off" -ex "thread apply all bt 12" > $OUT/stacks.txt 2>&1
    fi
    break
  done
) &
sp=$!
timeout 200 bash bench/sharing_on_device.sh .carry-new $OUT/a --matrix --scenarios mx_equal4_tiny --be-depth 2 \
  --be-kinds tiny --modes fair \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/a.log 2>&1
echo "a rc=$?"
wait $sp
cat $OUT/top-rgpud.txt
[ -f $OUT/stacks.txt ] && grep -E "^Thread|^#[0-9]" $OUT/stacks.txt | cut -c1-160 | head -150
tail -3 $OUT/a.log; rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*/rgpud-logs.tar.gz $OUT/*.log $OUT/a/sharing.json
