#!/usr/bin/env bash
# Session 19, call 1 (carry .carry-new = f0e2a46's code, 9ac6c78; plus tail_probe): how long
# should rgpud poll a session after a request? Requests after pauses longer than the 20 ms
# poll window, natively and through rgpud with 20 ms and 1 s windows.
#  A. tail probe (no config: the session is best-effort, --poll-us applies): 50 ms pauses.
#  B. the matrix's LC-alone cells, 3 s each: fair (20 ms) against fair with --lc-poll-us 1 s.
#  C. the same LC tenant with sparse arrivals (--lc-gap-ms 40), 6 s each.
set -u
C=$(cd .carry-new && pwd)
O=$OUT
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
d=$(mktemp -d); echo "$C/client/librgpu-icd.so" > $d/rgpu.icd
{
for cfg in "50 50000" "370 50000"; do
  echo "== native $cfg"; LD_LIBRARY_PATH=$C/lib OCL_ICD_VENDORS=$V $C/bench/tail_probe NVIDIA $cfg 60
  for poll in 20000 1000000; do
    rm -f /tmp/tp.sock
    LD_LIBRARY_PATH=$C/lib OCL_ICD_VENDORS=$V $C/server/rgpud --listen unix:/tmp/tp.sock --poll-us $poll > $O/rgpud-$poll.log 2>&1 &
    pid=$!; for i in $(seq 50); do grep -q "listening" $O/rgpud-$poll.log && break; sleep 0.1; done
    echo "== rgpu poll=$poll $cfg"
    LD_LIBRARY_PATH=$C/lib OCL_ICD_VENDORS=$d RGPU_SERVER=unix:/tmp/tp.sock $C/bench/tail_probe rgpu $cfg 60
    kill $pid; wait $pid 2>/dev/null
  done
done
} > $O/tail.txt 2>&1
timeout 200 bash bench/sharing_on_device.sh .carry-new $O/mx-alone --matrix \
  --scenarios mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50 \
  --modes native,fair,fair/--lc-poll-us=1000000 --duration 3 --timeout 25 > /dev/null 2>&1
echo "mx-alone rc=$?"
timeout 200 bash bench/sharing_on_device.sh .carry-new $O/mx-sparse --matrix --lc-gap-ms 40 \
  --scenarios mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370 \
  --modes native,fair,fair/--lc-poll-us=1000000 --duration 6 --timeout 25 > /dev/null 2>&1
echo "mx-sparse rc=$?"
cat $O/tail.txt | grep -E '==|request p50'
for m in mx-alone mx-sparse; do grep -A12 'solo runs' $O/$m/sharing.md | head -14; done
