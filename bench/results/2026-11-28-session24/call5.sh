#!/usr/bin/env bash
# Session 24, call 5 (carry .carry-new = the commit of --gate-chained, whose COMMIT names it): the
# whole matrix (42 scenarios), native, fair and fair+shared, 2 s per run
# (as session 21's call 9), for docs/scheduling.md's generated tables.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 590 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix --modes native,fair,fair+shared \
  --duration 2 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -A5 'LC p99 and BE throughput' $OUT/mx/sharing.md | head -3
grep -E '^- \*\*' $OUT/mx/sharing.md | tail -4
grep -E '^\| `mx_' $OUT/mx/sharing.md | head -60
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
