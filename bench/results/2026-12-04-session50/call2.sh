#!/usr/bin/env bash
# Session 50, call 2 (carry .carry-new of 9067a8a with rgpu-bench-overhead, and call 1's
# mx/sharing.json as .carry-new/native-sharing.json): the fair+shared pass of the matrix again
# against call 1's native runs (call 1's ran on a host that held it back in 32 of its 37
# cells), then issue 12's launch rate: bursts of 100,000 (five alternating rounds) and of 100
# (nine), native and rgpu over both sockets.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 300 bash bench/sharing_on_device.sh .carry-new $OUT/fs --matrix --modes fair+shared \
  --duration 2.5 --timeout 25 --baseline .carry-new/native-sharing.json > $OUT/fs.log 2>&1
echo "fs rc=$?"
grep -E "meet both" $OUT/fs/sharing.md | head
rm -f $OUT/fs/device-log.txt $OUT/fs/rgpud-logs.tar.gz $OUT/fs/progress.txt
for n in 100000 100; do
  r=5; [ $n = 100 ] && r=9
  timeout 120 bash bench/on_device.sh .carry-new $OUT/a$n --tasks async --no-links \
    --async-launches $n --async-rounds $r --worker-timeout 60 > $OUT/a$n.log 2>&1
  echo "a$n rc=$?"
  grep -A6 "Asynchronous launches" $OUT/a$n/overhead.md
done
cd $OUT && tar czf launch.tar.gz a100000 a100 a100000.log a100.log && rm -rf a100000 a100 a100000.log a100.log
