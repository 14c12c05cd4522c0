#!/usr/bin/env bash
# Session 34, call 4 (carry .carry-new, 031e201: rgpud as 033bee8, the benchmark with the
# host-stall meter). The whole matrix: native, fair+shared, fair; every native solo shape three
# times; 2.5 s runs; a fresh lease.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 585 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --modes native,fair+shared,fair --solo-repeats 3 --duration 2.5 --timeout 25 > $OUT/mx.log 2>&1
echo "mx rc=$?"
tail -3 $OUT/mx.log
grep -E "meet both" $OUT/mx/sharing.md | head
sed -n '/## Matrix host stalls/,/^## /p' $OUT/mx/sharing.md | head -40
