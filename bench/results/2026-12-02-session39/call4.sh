#!/usr/bin/env bash
# Session 39, call 4 (carry .carry-new): natively, what kernels waiting for user events in other
# contexts of the process cost a closed loop of ~30 us kernels two deep in this one, and how
# many CPUs the process keeps busy meanwhile (rgpu-probe-driver --pending, twice): call 3 found
# a driver thread per context at 84-99% of a CPU under `fair` (whose held launches wait on the
# application's queue behind a user event) and none under `fifo`. Then four `tiny` loops two
# deep, `fifo` and `fair` in separate runs, with the clients' stamps (bench/stamps_turns.py).
set -u
N=$(cd .carry-new && pwd)
. bench/device_vendors.sh
V=$(device_vendors $OUT/env.txt)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for i in 1 2; do
  OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib timeout 120 $N/bench/rgpu-probe-driver --platform NVIDIA --pending --count 20000 > $OUT/pending-$i.json 2>&1
  echo "pending $i rc=$?"; cat $OUT/pending-$i.json
done
run() {  # NAME SCENARIO MODE
  mkdir -p /tmp/st/$1
  RGPU_STAMPS=/tmp/st/$1/s timeout 80 bash bench/sharing_on_device.sh .carry-new $OUT/$1 --matrix --equal \
    --scenarios $2 --be-depth 2 --be-kinds tiny --modes $3 \
    --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/s.log 2>&1
  echo "== $1: $2 $3 rc=$?"
  grep -E '^\| tiny \|' $OUT/$1/sharing.md
  python3 bench/stamps_turns.py /tmp/st/$1/s.* 2>&1
}
run x4fifo mx_equal4_tiny fifo
run x4fair mx_equal4_tiny fair
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*.log $OUT/*/sharing.json $OUT/*/rgpud-logs.tar.gz
