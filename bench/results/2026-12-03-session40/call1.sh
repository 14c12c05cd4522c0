#!/usr/bin/env bash
# Session 40, call 1 (carry .carry-new of the session's HEAD, AwaitDispatch on): the equal
# tenants of issue 15 ("sharing wastes no device") across kinds and depths, fifo and fair side
# by side, then the known miss (4 `tiny` two deep) twice more: the worst case at this build.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
run() {  # NAME DEPTH KINDS
  timeout 170 bash bench/sharing_on_device.sh .carry-new $OUT/$1 --matrix --equal --be-depth $2 \
    --be-kinds $3 --modes fifo,fair \
    --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/$1.log 2>&1
  echo "$1 rc=$?"
  sed -n '/## Matrix equal/,/## Accounting/p' $OUT/$1/sharing.md | grep -E "^\||^- "
}
run d2 2 tiny,brief,membound,short
run d1 1 tiny,membound
run d2tiny-a 2 tiny
run d2tiny-b 2 tiny
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*/rgpud-logs.tar.gz $OUT/*.log $OUT/*/sharing.json
