#!/usr/bin/env bash
# Session 21, call 9 (carry .carry-new = 40614ce): the whole matrix, native, fair and
# fair+shared, 2 s per run (as session 19's call 5), for docs/scheduling.md's generated tables.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 580 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix --modes native,fair,fair+shared \
  --duration 2 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -A5 'LC p99 and BE throughput' $OUT/mx/sharing.md | head -3
grep -E '^- \*\*' $OUT/mx/sharing.md | tail -4
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
