#!/usr/bin/env bash
# Session 28, call 1 (carry .carry-new = b700dc8 plus clFinish and write stamps): where a burst
# of 100 launches spends its time, with request stamps on both ends (bench/stamps_bursts.py),
# then the launch rate of bursts of 100 and of 100,000 without stamps, nine rounds per path.
set -u
N=.carry-new
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for r in 1 2; do
  rm -rf /tmp/st && mkdir -p /tmp/st
  RGPU_STAMPS=/tmp/st/s timeout 150 bash bench/on_device.sh $N $OUT/st$r --tasks async --async-launches 100 \
    --async-rounds 1 --no-links --worker-timeout 100 > $OUT/st$r.log 2>&1
  echo "st$r rc=$?"; grep -A6 'Asynchronous launches' $OUT/st$r/overhead.md
  python3 bench/stamps_bursts.py /tmp/st | tee $OUT/st$r/bursts.md
done
timeout 200 bash bench/on_device.sh $N $OUT/async100 --tasks async --async-launches 100 \
  --async-rounds 9 --no-links --worker-timeout 150 > $OUT/async100.log 2>&1
echo "async100 rc=$?"; grep -A6 'Asynchronous launches' $OUT/async100/overhead.md
