#!/usr/bin/env bash
# Session 15, call 3: the read without an event and the bounded reaping (new) against
# HEAD 363adbb (old), both with the temporary RGPU_STAMPS marks, in one call.
#   bash .carry-s15/run_call3.sh .carry-s15 .carry-old $OUT
# 1. tail_probe natively, then through each rgpud (unix and TCP), alternating, twice;
#    every rgpu run's stamps joined by stamps.py.
# 2. The sharing matrix's LC cells under fair, new build (with native) then old build
#    (against the new run's native, --baseline).
NEW=$(cd $1 && pwd) OLD=$(cd $2 && pwd) O=$3
mkdir -p $O/st
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
run() {  # carry label listen server cfg...
  local C=$1 label=$2 listen=$3 server=$4; shift 4
  local tag="$label-$rep-${1}-${2}"
  local d=$(mktemp -d); echo "$C/client/librgpu-icd.so" > $d/rgpu.icd
  rm -f /tmp/tp.sock
  LD_LIBRARY_PATH=$C/lib RGPU_STAMPS=$O/st/server-$tag OCL_ICD_VENDORS=$V $C/server/rgpud --listen $listen > $O/st/rgpud-$tag.log 2>&1 &
  local pid=$!; sleep 0.5; for i in $(seq 50); do grep -q "listening" $O/st/rgpud-$tag.log && break; sleep 0.1; done
  echo "== rep $rep $label $*"
  LD_LIBRARY_PATH=$C/lib RGPU_STAMPS=$O/st/client-$tag OCL_ICD_VENDORS=$d RGPU_SERVER=$server $NEW/bench/tail_probe rgpu "$@" 400
  kill $pid; wait $pid 2>/dev/null
  python3 $NEW/stamps.py $O/st/client-$tag.* $O/st/server-$tag.* 400 > $O/st/join-$tag.txt
  grep -E "TOTAL|launch done|answer sent -> client has|driver blocking" $O/st/join-$tag.txt
}
{
for rep in 1 2; do
  for cfg in "50 4000" "370 4000" "370 1000"; do
    echo "== rep $rep native $cfg"; LD_LIBRARY_PATH=$NEW/lib OCL_ICD_VENDORS=$V $NEW/bench/tail_probe NVIDIA $cfg 400
    run $OLD old-unix unix:/tmp/tp.sock unix:/tmp/tp.sock $cfg
    run $NEW new-unix unix:/tmp/tp.sock unix:/tmp/tp.sock $cfg
  done
  run $OLD old-tcp 127.0.0.1:7399 127.0.0.1:7399 370 4000
  run $NEW new-tcp 127.0.0.1:7399 127.0.0.1:7399 370 4000
done
} > $O/tail.txt 2>&1
cells=mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_lc_poisson_2000,mx_be_membound,mx_be_short,mx_poisson_370_membound,mx_periodic_370_membound,mx_poisson_50_membound,mx_poisson_370_short,mx_2lc2be_poisson_370
bash bench/sharing_on_device.sh $NEW $O/new --matrix --modes native,fair,fair+shared --scenarios $cells --duration 3 --timeout 25 > /dev/null 2>&1
cp $O/new/sharing.json $OLD/native-sharing.json
bash bench/sharing_on_device.sh $OLD $O/old --matrix --modes fair,fair+shared --scenarios $cells --duration 3 --timeout 25 --baseline $OLD/native-sharing.json > /dev/null 2>&1
grep -E "TOTAL|== rep|request p50" $O/tail.txt
for x in new old; do grep -A 18 "^## Matrix (" $O/$x/sharing.md | grep "^|"; done
cd $O && tar czf st.tar.gz st && rm -rf st
