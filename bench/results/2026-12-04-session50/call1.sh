#!/usr/bin/env bash
# Session 50, call 1 (carry .carry-new of 9067a8a, less the overhead benchmark and probes): the
# whole matrix at main's head (the aside thread of session 49 in), native / fair+shared / fair
# in one run, every native solo shape twice, for docs/scheduling.md's generated matrix tables
# and bounds.py (as session 48's call 3).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 585 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --modes native,fair+shared,fair --solo-repeats 2 --duration 2.5 --timeout 25 > $OUT/mx.log 2>&1
echo "mx rc=$?"
tail -3 $OUT/mx.log
grep -E "meet both" $OUT/mx/sharing.md | head
rm -f $OUT/mx/device-log.txt $OUT/mx/rgpud-logs.tar.gz $OUT/mx/progress.txt
