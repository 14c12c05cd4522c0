#!/usr/bin/env bash
# Session 19, call 3: old (.carry-old: f0e2a46, rgpud polls 20 ms) against new (.carry-new:
# rgpud polls 1 s, latency-critical sessions 10 s; the ICD writes asynchronous requests
# straight into the control rings when rgpud's reader is awake), in one call:
#  A. tail probe (kernel then 4-byte read after a pause): native, old, old with the new poll
#     lengths (--poll-us 1000000), new.
#  B. overhead benchmark (round trips, requests, launch rate), old / new alternating twice.
#  C. the matrix's LC-alone cells and one shared cell, old then new.
set -u
O=$OUT
[ -d .carry-old/lib ] || cp -r .carry-new/lib .carry-old/lib  # carried once
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
{
for cfg in "50 50000 80" "370 50000 80" "50 1000 400" "370 1000 400"; do
  set -- $cfg
  echo "== native $cfg"; LD_LIBRARY_PATH=.carry-new/lib OCL_ICD_VENDORS=$V .carry-new/bench/tail_probe NVIDIA $1 $2 $3
  for v in old old-poll new; do
    C=$(cd .carry-${v%-poll} && pwd); args=""; [ $v = old-poll ] && args="--poll-us 1000000"
    d=$(mktemp -d); echo "$C/client/librgpu-icd.so" > $d/rgpu.icd
    rm -f /tmp/tp.sock
    LD_LIBRARY_PATH=$C/lib OCL_ICD_VENDORS=$V $C/server/rgpud --listen unix:/tmp/tp.sock $args > $O/rgpud.log 2>&1 &
    pid=$!; for i in $(seq 50); do grep -q "listening" $O/rgpud.log && break; sleep 0.1; done
    echo "== $v $cfg"
    LD_LIBRARY_PATH=$C/lib OCL_ICD_VENDORS=$d RGPU_SERVER=unix:/tmp/tp.sock $C/bench/tail_probe rgpu $1 $2 $3
    kill $pid; wait $pid 2>/dev/null
  done
done
} > $O/tail.txt 2>&1
grep -E '==|request p50' $O/tail.txt
for r in 1 2; do
  for v in old new; do
    timeout 110 bash bench/on_device.sh .carry-$v $O/ovh-$v-$r --tasks sync,requests,async \
      --no-links --iterations 3000 --async-launches 100000 --request-us 10,50,370,2000 --worker-timeout 100 > /dev/null 2>&1
    echo "ovh $v $r rc=$?"
  done
done
for v in old new; do
  timeout 150 bash bench/sharing_on_device.sh .carry-$v $O/mx-$v --matrix \
    --scenarios mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_poisson_370_membound \
    --modes native,fair --duration 3 --timeout 25 > /dev/null 2>&1
  echo "mx $v rc=$?"
  grep -A10 'solo runs' $O/mx-$v/sharing.md | tail -6
  rm -f $O/mx-$v/device-log.txt $O/mx-$v/progress.txt
done
cd $O && tar czf ovh.tar.gz ovh-* && rm -rf ovh-*
