#!/usr/bin/env bash
# Session 39, call 2: how four `tiny` loops two deep take turns under `fair`, from the clients'
# request stamps (bench/stamps_turns.py): each change of turn's length and each turn's gaps
# between completions, against one loop alone and two, `fair:32000` and `fifo`.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
run() {  # NAME SCENARIO MODE
  mkdir -p /tmp/st/$1
  RGPU_STAMPS=/tmp/st/$1/s timeout 80 bash bench/sharing_on_device.sh .carry-new $OUT/$1 --matrix --equal \
    --scenarios $2 --be-depth 2 --be-kinds tiny --modes $3 \
    --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/s.log 2>&1
  echo "== $1: $2 $3 rc=$?"
  grep -E '^\| tiny \|' $OUT/$1/sharing.md
  python3 bench/stamps_turns.py /tmp/st/$1/s.* 2>&1
  tar -C /tmp/st -czf $OUT/$1/stamps.tar.gz $1
}
run solo mx_be_tiny fair
run x4 mx_equal4_tiny fair
run x2 mx_equal2_tiny fair
run x4q32 mx_equal4_tiny fair:32000
run x4fifo mx_equal4_tiny fifo
run x4b mx_equal4_tiny fair
ls -la $OUT/*/stamps.tar.gz
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*.log $OUT/*/sharing.json
