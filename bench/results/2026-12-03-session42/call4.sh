#!/usr/bin/env bash
# Session 42, call 4 (carry as call 3, plus call 3's mx/sharing.json as
# .carry-new/native-matrix.json): call 3's fair+shared pass ran with the host holding threads
# back in 17 of its 37 runs (its LC alone read 6-10x native in two shapes): the whole matrix
# again under fair+shared only, against call 3's native runs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 280 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --modes fair+shared --baseline .carry-new/native-matrix.json --duration 2.5 --timeout 25 > $OUT/mx.log 2>&1
echo "mx rc=$?"
tail -3 $OUT/mx.log
grep -E "meet both" $OUT/mx/sharing.md | head
rm -f $OUT/mx/device-log.txt $OUT/mx/rgpud-logs.tar.gz
