#!/usr/bin/env bash
# Session 25, call 4 (carry .carry-new = 0fbe85e): the whole matrix again (37 cells, 49 runs
# per mode), native, fair and fair+shared, 2 s per run, with other arrival times (--seed 2;
# call 2, whose tables docs/scheduling.md has, used the default seed 1).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 590 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix --modes native,fair,fair+shared \
  --duration 2 --timeout 25 --seed 2 > /dev/null 2>&1
echo "mx rc=$?"
grep -A5 'LC p99 and BE throughput' $OUT/mx/sharing.md | head -3
grep -E '^- \*\*' $OUT/mx/sharing.md | tail -4
grep -E '^\| `mx_' $OUT/mx/sharing.md | head -70
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
