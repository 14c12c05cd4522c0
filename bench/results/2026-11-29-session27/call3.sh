#!/usr/bin/env bash
# Session 27, call 3 (carry as call 2): the whole matrix again at 3 s per run (about 750 LC
# requests per cell against 500), native, fair+shared and fair: call 2's native solo LC p99
# read 0.77 ms for bursty arrivals against call 1's 0.47, so ratios swing with the baseline.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 580 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --modes native,fair+shared,fair --duration 3 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -E '^- \*\*' $OUT/mx/sharing.md | tail -3
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
