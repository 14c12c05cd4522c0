#!/usr/bin/env bash
# Session 44, call 1 (carry .carry-new of cee30aa: --direct-beside-lc on by default): the
# whole matrix, native / fair+shared / fair, native solo shapes twice, in one run, for
# docs/scheduling.md's generated matrix tables.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 580 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --modes native,fair+shared,fair --solo-repeats 2 --duration 2.5 --timeout 25 > $OUT/mx.log 2>&1
echo "mx rc=$?"
tail -3 $OUT/mx.log
grep -E "meet both" $OUT/mx/sharing.md | head
rm -f $OUT/mx/device-log.txt $OUT/mx/rgpud-logs.tar.gz $OUT/mx/progress.txt
