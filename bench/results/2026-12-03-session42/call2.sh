#!/usr/bin/env bash
# Session 42, call 2 (carry .carry-new of this session's build with --park-first on by
# default): the matrix's cells whose BE kind parks (tiny, brief: launches of one slice), every
# arrival process, LC kernel length and 2lc2be, under fair and fair+shared with parking and
# without (--park-first=0, as before), against native solo (session 41's call 3 mx/sharing.json,
# copied to .carry-new/native-matrix.json). (As first run, with session 37's equal-tenant file
# as the baseline, the matrix stopped at once, and then four and two equal `tiny` loops one
# deep ran, fifo / fair / fair without parking: call2-first/.)
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 420 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix --be-kinds tiny,brief \
  --modes fair,fair/--park-first=0,fair+shared,fair+shared/--park-first=0 \
  --baseline .carry-new/native-matrix.json --duration 2.5 --timeout 25 > $OUT/mx.log 2>&1
echo "mx rc=$?"
tail -3 $OUT/mx.log
grep -E "meet both" $OUT/mx/sharing.md | head
sed -n '/## Matrix/,/## Accounting/p' $OUT/mx/sharing.md | grep -E "^\| (mx_|cell|scenario)" | head -40
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*/rgpud-logs.tar.gz
