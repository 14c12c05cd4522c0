#!/usr/bin/env bash
# call 1 of session 14: where a request's tail goes after a pause (tail_probe), variants of
# rgpud/client waiting. Ran from a carry made by bench/make_carry.sh with tail_probe
# (g++ -O2 -o CARRY/bench/tail_probe tail_probe.cpp -lOpenCL) and this script copied in:
#   bash CARRY/run_tail.sh $OUT/tail > $OUT/tail.txt
O=$1; mkdir -p $O
A=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$A/lib:${LD_LIBRARY_PATH:-}"
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
P=$A/bench/tail_probe
d=$(mktemp -d); echo "$A/client/librgpu-icd.so" > $d/rgpu.icd
nproc > $O/nproc.txt; nvidia-smi -q | grep -i -E "product name|clocks|persistence" | head > $O/gpu.txt
run_rgpu() {  # label, rgpud env, rgpud args, client env, taskset client, taskset rgpud
  local label=$1 renv=$2 rargs=$3 cenv=$4 tc=$5 tr=$6
  sock=/tmp/tp.sock; rm -f $sock
  env $renv OCL_ICD_VENDORS=$V $tr $A/server/rgpud --listen unix:$sock $rargs > $O/rgpud-$label-$rep.log 2>&1 &
  pid=$!; for i in $(seq 50); do [ -S $sock ] && break; sleep 0.1; done
  for cfg in "370 4000" "370 1000" "50 4000"; do
    echo "== rep $rep $label $cfg"; env $cenv OCL_ICD_VENDORS=$d RGPU_SERVER=unix:$sock $tc $P rgpu $cfg 500
  done
  kill $pid; wait $pid 2>/dev/null
  grep "request trace" $O/rgpud-$label-$rep.log | sed 's/^/   trace: /'
}
for rep in 1 2 3; do
  for cfg in "370 4000" "370 1000" "50 4000"; do
    echo "== rep $rep native $cfg"; OCL_ICD_VENDORS=$V $P NVIDIA $cfg 500
  done
  run_rgpu head "" "" "" "" ""
  run_rgpu trace "RGPU_TRACE_REQUESTS=1" "" "" "" ""
  run_rgpu poll0 "" "--poll-us 0" "" "" ""
  run_rgpu spin0 "" "" "RGPU_SPIN_US=0" "" ""
  run_rgpu pinned "" "" "" "taskset -c 8-11" "taskset -c 2-5"
done
