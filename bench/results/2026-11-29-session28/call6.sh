#!/usr/bin/env bash
# Session 28, call 6 (.carry-new = 0c9f680): where a burst of 100,000 launches goes, unix and
# TCP, with request stamps (bench/stamps_bursts.py DIR 1), twice.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for r in 1 2; do
  rm -rf /tmp/st && mkdir -p /tmp/st
  RGPU_STAMPS=/tmp/st/s timeout 150 bash bench/on_device.sh .carry-new /tmp/o$r --tasks async --async-launches 100000 \
    --async-rounds 1 --no-links --worker-timeout 100 > /dev/null 2>&1
  echo "st$r rc=$?"; grep -A6 'Asynchronous launches' /tmp/o$r/overhead.md | grep '^|'
  python3 bench/stamps_bursts.py /tmp/st 1 | tee $OUT/st$r-bursts.md
done
