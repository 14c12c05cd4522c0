#!/usr/bin/env bash
# Session 27, call 1 (carry .carry-new = ac746d2): the whole matrix (37 cells), native, fair,
# fair+shared and fair+shared with --gate-at-once, 2 s per run: the A/B session 26 could not
# run (its call 9 had the option on and read fair+shared 1.3-11x session 25's at p99), and the
# default build's tables for docs/scheduling.md.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 575 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --modes native,fair,fair+shared,fair+shared/--gate-at-once=1 \
  --duration 2 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -E '^- \*\*' $OUT/mx/sharing.md | tail -4
grep -E '^\| `mx_' $OUT/mx/sharing.md | head -80
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
