#!/usr/bin/env bash
# Session 18, call 4 (carry .carry-new: the control-ring build with spinners, pre-faulted rings and
# little-endian indices, plus tail_probe and stamps.py as in call 3): the same as call 3, then
# round trips and requests (the overhead benchmark) with rings on and off, alternating twice,
# and LC-alone cells of the matrix with rings on and off.
set -u
C=$(cd .carry-new && pwd)
O=$OUT
mkdir -p $O/st
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
d=$(mktemp -d); echo "$C/client/librgpu-icd.so" > $d/rgpu.icd
{
for rep in 1 2; do
  for cfg in "50 1000" "370 1000"; do
    echo "== rep $rep native $cfg"; LD_LIBRARY_PATH=$C/lib OCL_ICD_VENDORS=$V $C/bench/tail_probe NVIDIA $cfg 400
    for ring in 0 1; do
      tag="ring$ring-$rep-${cfg// /-}"
      rm -f /tmp/tp.sock
      LD_LIBRARY_PATH=$C/lib RGPU_STAMPS=$O/st/server-$tag OCL_ICD_VENDORS=$V $C/server/rgpud --listen unix:/tmp/tp.sock > $O/st/rgpud-$tag.log 2>&1 &
      pid=$!; for i in $(seq 50); do grep -q "listening" $O/st/rgpud-$tag.log && break; sleep 0.1; done
      echo "== rep $rep ring=$ring $cfg"
      RGPU_RING=$ring LD_LIBRARY_PATH=$C/lib RGPU_STAMPS=$O/st/client-$tag OCL_ICD_VENDORS=$d RGPU_SERVER=unix:/tmp/tp.sock $C/bench/tail_probe rgpu $cfg 400
      kill $pid; wait $pid 2>/dev/null
      python3 $C/stamps.py $O/st/client-$tag.* $O/st/server-$tag.* 400 > $O/st/join-$tag.txt 2>&1
      head -20 $O/st/join-$tag.txt
    done
  done
done
} > $O/tail.txt 2>&1
for r in 1 2; do
  for ring in 0 1; do
    RGPU_RING=$ring timeout 120 bash bench/on_device.sh .carry-new $O/ovh-ring$ring-$r --tasks sync,requests,async \
      --no-links --iterations 3000 --async-launches 100000 --request-us 10,50,370,2000 --worker-timeout 100 > /dev/null 2>&1
    echo "ovh ring=$ring $r rc=$?"
  done
done
for ring in 0 1; do
  RGPU_RING=$ring timeout 150 bash bench/sharing_on_device.sh .carry-new $O/mx-ring$ring --matrix \
    --scenarios mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_poisson_370_membound \
    --modes native,fair --duration 2 --timeout 25 > /dev/null 2>&1
  echo "mx ring=$ring rc=$?"
done
cd $O && tar czf st.tar.gz st ovh-ring* mx-ring* && rm -rf st ovh-ring* mx-ring*
