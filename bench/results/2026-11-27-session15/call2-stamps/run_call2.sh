#!/usr/bin/env bash
# Session 15, call 2: where a request's time goes between the client and rgpud, from both
# sides' RGPU_STAMPS (a temporary build with proto/stamps.h marks). tail_probe (a ~370 or
# 50 us kernel, then a 4-byte blocking read, after a pause), natively and through rgpud.
#   bash CARRY/run_call2.sh CARRY $OUT
C=$(cd $1 && pwd) O=$2
mkdir -p $O/st
export LD_LIBRARY_PATH="$C/lib:${LD_LIBRARY_PATH:-}"
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
P=$C/bench/tail_probe
d=$(mktemp -d); echo "$C/client/librgpu-icd.so" > $d/rgpu.icd
nproc > $O/nproc.txt
run() {  # label listen-address client-server cfg...
  local label=$1 listen=$2 server=$3; shift 3
  local tag="$label-$rep-${1}-${2}"
  rm -f /tmp/tp.sock
  RGPU_STAMPS=$O/st/server-$tag OCL_ICD_VENDORS=$V $C/server/rgpud --listen $listen > $O/st/rgpud-$tag.log 2>&1 &
  local pid=$!; sleep 0.5; for i in $(seq 50); do grep -q "listening\|serving" $O/st/rgpud-$tag.log && break; sleep 0.1; done
  echo "== rep $rep $label $*"
  RGPU_STAMPS=$O/st/client-$tag OCL_ICD_VENDORS=$d RGPU_SERVER=$server $P rgpu "$@" 400
  kill $pid; wait $pid 2>/dev/null
  python3 $C/stamps.py $O/st/client-$tag.* $O/st/server-$tag.* 400
}
for rep in 1 2; do
  for cfg in "370 4000" "370 1000" "50 4000"; do
    echo "== rep $rep native $cfg"; OCL_ICD_VENDORS=$V $P NVIDIA $cfg 400
    run unix unix:/tmp/tp.sock unix:/tmp/tp.sock $cfg
  done
  run tcp 127.0.0.1:7399 127.0.0.1:7399 370 4000
done
cd $O && tar czf st.tar.gz st && rm -rf st
