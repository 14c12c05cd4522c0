#!/usr/bin/env bash
# Session 18, call 3 (carry .carry-new: the control-ring build, plus session 14's tail_probe
# built with g++ -O2 -lOpenCL, and bench/stamps.py): where a request's time goes with control
# rings on and off (RGPU_RING=0), request stamps at both ends, alternating twice; then small
# and mid-size transfers with rings on and off.
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
    RGPU_RING=$ring timeout 100 bash bench/on_device.sh .carry-new $O/bw-ring$ring-$r --tasks bandwidth,sync \
      --no-links --iterations 2000 --max-bytes 16M --bandwidth-rounds 1 > /dev/null 2>&1
    echo "bw ring=$ring $r rc=$?"
  done
done
cd $O && tar czf st.tar.gz st bw-ring* && rm -rf st bw-ring*
