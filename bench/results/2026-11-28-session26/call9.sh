#!/usr/bin/env bash
# Session 26, call 9 (carry .carry-new = 199c618, --gate-at-once): the whole matrix (37 cells,
# 49 runs per mode, with `tiny`), native, fair and fair+shared, 2 s per run, for
# docs/scheduling.md's generated tables.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 590 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix --modes native,fair,fair+shared \
  --duration 2 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -A5 'LC p99 and BE throughput' $OUT/mx/sharing.md | head -3
grep -E '^- \*\*' $OUT/mx/sharing.md | tail -4
grep -E '^\| `mx_' $OUT/mx/sharing.md | head -70
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
