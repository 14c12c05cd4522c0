#!/usr/bin/env bash
# Session 48, call 6 (carry .carry-new of 85b7f37 with bench/rgpu-probe-queues' wait test): in
# call 5 the lab's core tenant, in one context with a persistent kernel (a context group), got
# the answer to its wait only when the persistent kernel ended (wall 1692 ms, kernel 57 ms), so
# the runner never sent the stop. Natively, and through rgpud (fifo, fair) in one context: does
# a wait for a one-group kernel on queue 1 return before a kernel on queue 0 that polls a flag
# released 500 ms after it started (clFinish, clWaitForEvents, status polling, blocking read)?
set -u
N=$(pwd)/.carry-new
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
P="$N/bench/rgpu-probe-queues --release-ms 500 --max-polls 60000000 --settle-ms 50"
env OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib timeout 60 $P --platform NVIDIA > $OUT/native.json 2>&1
echo "native rc=$?"
mkdir -p /tmp/icd && echo "$N/client/librgpu-icd.so" > /tmp/icd/rgpu.icd
for pol in fifo fair; do
  env OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/server/rgpud --listen unix:/tmp/rg-$pol.sock \
      --platform NVIDIA --policy $pol > $OUT/rgpud-$pol.log 2>&1 &
  pid=$!
  sleep 2
  env OCL_ICD_VENDORS=/tmp/icd LD_LIBRARY_PATH=$N/lib RGPU_SERVER=unix:/tmp/rg-$pol.sock timeout 90 $P \
      > $OUT/rgpu-$pol.json 2>&1
  echo "rgpu $pol rc=$?"
  kill $pid; wait $pid
done
grep -h '"wait"\|platform' $OUT/*.json
