#!/usr/bin/env bash
# Session 49, call 1 (carry .carry-new of the aside-thread change, with rgpu-probe-queues):
# (1) session 48's flag probe through rgpud's default (a kernel polling a flag that a second
# client thread releases 500 ms after it starts, waited for by clFinish, clWaitForEvents, status
# polling and a blocking read; session 48: 19.05 s to the poll limit), natively and under fifo
# and fair; (2) what the park and the aside thread cost: the overhead benchmark's sync round
# trips and requests with rgpud's default, with --serve-aside-us=0 (no park watcher: the
# behaviour before) and with --inline-waits=0, two rounds in reverse order.
set -u
N=$(pwd)/.carry-new
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
P="$N/bench/rgpu-probe-queues --release-ms 500 --max-polls 60000000 --settle-ms 50"
env OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib timeout 60 $P --platform NVIDIA > $OUT/probe-native.json 2>&1
echo "native rc=$?"
mkdir -p /tmp/icd && echo "$N/client/librgpu-icd.so" > /tmp/icd/rgpu.icd
for pol in fifo fair; do
  env OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/server/rgpud --listen unix:/tmp/rg-$pol.sock \
      --platform NVIDIA --policy $pol > $OUT/rgpud-$pol.log 2>&1 &
  pid=$!
  sleep 2
  env OCL_ICD_VENDORS=/tmp/icd LD_LIBRARY_PATH=$N/lib RGPU_SERVER=unix:/tmp/rg-$pol.sock timeout 90 $P \
      > $OUT/probe-rgpu-$pol.json 2>&1
  echo "rgpu $pol rc=$?"
  kill $pid; wait $pid
done
grep -h '"wait"\|platform' $OUT/probe-*.json | head -40
ovh() {  # mode, round
  local extra=()
  [ $1 = aside0 ] && extra=(--rgpud-arg=--serve-aside-us=0)
  [ $1 = iw0 ] && extra=(--rgpud-arg=--inline-waits=0)
  timeout 200 bash bench/on_device.sh $N $OUT/ovh-$1-r$2 --tasks sync requests --no-links \
    --iterations 5000 --request-us 10,50,370,2000,10000 --worker-timeout 120 "${extra[@]}" \
    > $OUT/ovh-$1-r$2.log 2>&1
  echo "ovh $1 r$2 rc=$?"
}
for m in default aside0 iw0; do ovh $m 1; done
for m in iw0 aside0 default; do ovh $m 2; done
cd $OUT && tar czf ovh.tar.gz ovh-* && rm -rf ovh-* && ls
