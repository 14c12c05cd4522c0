#!/usr/bin/env bash
# Session 43, call 5 (carry as call 2: 9de5991, plus session 42's call 3 mx/sharing.json as
# .carry-new/native-matrix.json): the whole matrix under `fair+shared` and `fair` at this
# session's build, against session 42's call 3 native runs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 560 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --modes fair+shared,fair --baseline .carry-new/native-matrix.json --duration 2.5 --timeout 25 > $OUT/mx.log 2>&1
echo "mx rc=$?"
tail -3 $OUT/mx.log
grep -E "meet both" $OUT/mx/sharing.md | head
rm -f $OUT/mx/device-log.txt $OUT/mx/rgpud-logs.tar.gz $OUT/mx/progress.txt
