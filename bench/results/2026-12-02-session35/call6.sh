#!/usr/bin/env bash
# Session 35, call 6 (carry .carry-new): the whole matrix, native / fair+shared / fair, every
# native solo shape three times, 2.5 s runs, a fresh calibration (LC kernels also timed after
# an idle gap, the accounting's reference for LC tenants), rgpud at debug.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 585 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --modes native,fair+shared,fair --solo-repeats 3 --duration 2.5 --timeout 25 \
  --rgpud-log-level debug > $OUT/mx.log 2>&1
echo "mx rc=$?"
tail -3 $OUT/mx.log
grep -E "meet both" $OUT/mx/sharing.md | head
