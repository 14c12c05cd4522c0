#!/usr/bin/env bash
# Session 15, call 10: requests after 4 ms pauses, 363adbb (old) against b8cfffb (new), the
# order of the two builds alternating between rounds (call 3 always ran old then new).
# tail_probe (bench/results/2026-11-26-h100-session14/call1-tail/tail_probe.cpp), 400 requests.
#   bash .carry-s15/run_call10.sh .carry-s15 .carry-old $OUT
NEW=$(cd $1 && pwd) OLD=$(cd $2 && pwd) O=$3
mkdir -p $O
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
run() {  # carry label listen server kernel_us pause_us
  local C=$1 label=$2 listen=$3 server=$4; shift 4
  local d=$(mktemp -d); echo "$C/client/librgpu-icd.so" > $d/rgpu.icd
  rm -f /tmp/tp.sock
  LD_LIBRARY_PATH=$C/lib OCL_ICD_VENDORS=$V $C/server/rgpud --listen $listen > $O/rgpud.log 2>&1 &
  local pid=$!; sleep 0.5; for i in $(seq 50); do grep -q "listening" $O/rgpud.log && break; sleep 0.1; done
  echo "== rep $rep $label $*"
  LD_LIBRARY_PATH=$C/lib OCL_ICD_VENDORS=$d RGPU_SERVER=$server $NEW/bench/tail_probe rgpu "$@" 400 | head -1
  kill $pid; wait $pid 2>/dev/null
}
for rep in 1 2 3 4; do
  order="old new"; [ $((rep % 2)) = 0 ] && order="new old"
  for cfg in "370 4000" "50 4000"; do
    echo "== rep $rep native $cfg"; LD_LIBRARY_PATH=$NEW/lib OCL_ICD_VENDORS=$V $NEW/bench/tail_probe NVIDIA $cfg 400 | head -1
    for x in $order; do C=$NEW; [ $x = old ] && C=$OLD; run $C $x-unix unix:/tmp/tp.sock unix:/tmp/tp.sock $cfg; done
  done
  for x in $order; do C=$NEW; [ $x = old ] && C=$OLD; run $C $x-tcp 127.0.0.1:7399 127.0.0.1:7399 370 4000; done
done
