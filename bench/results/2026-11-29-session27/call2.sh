#!/usr/bin/env bash
# Session 27, call 2 (carry .carry-new = the tree of the commit that turns --gate-at-once on by
# default and keeps a kernel's arguments across references that come and go): the whole
# matrix, native, fair, fair+shared (the defaults, for docs/scheduling.md's generated tables)
# and fair with --gate-at-once=0 (the option's A/B under fair), 2 s per run.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 575 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --modes native,fair,fair+shared,fair/--gate-at-once=0 \
  --duration 2 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -E '^- \*\*' $OUT/mx/sharing.md | tail -4
grep -E '^\| `mx_' $OUT/mx/sharing.md | head -80
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
