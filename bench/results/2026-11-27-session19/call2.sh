#!/usr/bin/env bash
# Session 19, call 2 (carry .carry-new as call 1): where a request's time goes after a 50 ms
# pause when rgpud polls for 1 s (stamps, both ends), and the LC-alone cells twice more
# (fair with 20 ms and 1 s polls alternating with native) to see what is noise.
set -u
C=$(cd .carry-new && pwd)
O=$OUT
mkdir -p $O/st
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
d=$(mktemp -d); echo "$C/client/librgpu-icd.so" > $d/rgpu.icd
{
for cfg in "50 50000 100" "370 50000 100" "50 2000 300"; do
  set -- $cfg
  echo "== native $cfg"; LD_LIBRARY_PATH=$C/lib OCL_ICD_VENDORS=$V $C/bench/tail_probe NVIDIA $1 $2 $3
  for poll in 1000000 20000; do
    tag=$poll-$1-$2
    rm -f /tmp/tp.sock
    LD_LIBRARY_PATH=$C/lib RGPU_STAMPS=$O/st/server-$tag OCL_ICD_VENDORS=$V $C/server/rgpud --listen unix:/tmp/tp.sock --poll-us $poll > $O/st/rgpud-$tag.log 2>&1 &
    pid=$!; for i in $(seq 50); do grep -q "listening" $O/st/rgpud-$tag.log && break; sleep 0.1; done
    echo "== rgpu poll=$poll $cfg"
    LD_LIBRARY_PATH=$C/lib RGPU_STAMPS=$O/st/client-$tag OCL_ICD_VENDORS=$d RGPU_SERVER=unix:/tmp/tp.sock $C/bench/tail_probe rgpu $1 $2 $3
    kill $pid; wait $pid 2>/dev/null
    python3 $C/stamps.py $O/st/client-$tag.* $O/st/server-$tag.* $3 > $O/st/join-$tag.txt 2>&1
    head -24 $O/st/join-$tag.txt
  done
done
} > $O/tail.txt 2>&1
for rep in 1 2; do
  timeout 150 bash bench/sharing_on_device.sh .carry-new $O/mx-alone-$rep --matrix \
    --scenarios mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50 \
    --modes fair/--lc-poll-us=1000000,native,fair --duration 3 --timeout 25 > /dev/null 2>&1
  echo "mx-alone-$rep rc=$?"
done
grep -E '==|request p50' $O/tail.txt
for m in mx-alone-1 mx-alone-2; do grep -A9 'solo runs' $O/$m/sharing.md | tail -6; done
cd $O && tar czf st.tar.gz st && rm -rf st && for m in mx-alone-1 mx-alone-2; do rm -f $m/device-log.txt $m/progress.txt; done
