#!/usr/bin/env bash
# Session 31, call 4 (.carry-new = this session's build, unprofiled twins on): the whole
# workload matrix of issue 15, modes native, fair+shared and fair, 2.5 s per run, native solo
# runs three times (around each mode's pass).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c4 && rm -rf $W && mkdir -p $W
timeout 575 bash bench/sharing_on_device.sh .carry-new $W/mx --matrix --modes native,fair+shared,fair \
  --solo-repeats 3 --duration 2.5 --timeout 25 > $W/mx.log 2>&1
echo "mx rc=$?"
tail -5 $W/mx.log
rm -f $W/mx/rgpud-*.log
(cd /tmp && tar czf $OUT/c4.tar.gz c4)
