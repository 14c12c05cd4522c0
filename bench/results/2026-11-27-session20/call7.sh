#!/usr/bin/env bash
# Session 20, call 7 (carry .carry-new = 247cd6d, main after the review changes):
#  A. requests after pauses longer than rgpud's poll window (issue 12 outcome 1's open case):
#     session 14's tail probe (a 370 us kernel then a 4-byte blocking read after a pause of
#     2 s, 40 requests; and after 50 ms, 200) natively, through rgpud as it starts (a
#     best-effort session polls 1 s after a request), and with --poll-us 3000000.
#  B. read_probe of 1 and 16 MiB over TCP with rgpud's debug log (pinned staging used).
set -u
O=$OUT
N=$(cd .carry-new && pwd)
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
g++ -O2 -std=c++20 -o /tmp/tail_probe bench/results/2026-11-26-h100-session14/call1-tail/tail_probe.cpp -lOpenCL
g++ -O2 -std=c++20 -o /tmp/read_probe bench/results/2026-11-27-session20/read_probe.cpp -lOpenCL
d=$(mktemp -d); echo "$N/client/librgpu-icd.so" > $d/rgpu.icd
serve() {  # serve LOG [rgpud args]: rgpud on unix:/tmp/tp.sock and 127.0.0.1:7799 is not needed
  local log=$1; shift
  rm -f /tmp/tp.sock
  LD_LIBRARY_PATH=$N/lib OCL_ICD_VENDORS=$V $N/server/rgpud --listen unix:/tmp/tp.sock "$@" > $log 2>&1 &
  pid=$!; for i in $(seq 50); do grep -q "listening" $log && break; sleep 0.1; done
}
{
for cfg in "370 2000000 40" "370 50000 200"; do
  set -- $cfg
  echo "== native $cfg"; OCL_ICD_VENDORS=$V /tmp/tail_probe NVIDIA $1 $2 $3
  for v in default poll3s; do
    args=""; [ $v = poll3s ] && args="--poll-us 3000000"
    serve $O/rgpud-$v.log $args
    echo "== rgpu $v $cfg"
    LD_LIBRARY_PATH=$N/lib OCL_ICD_VENDORS=$d RGPU_SERVER=unix:/tmp/tp.sock /tmp/tail_probe rgpu $1 $2 $3
    kill $pid; wait $pid 2>/dev/null
  done
done
} > $O/tail.txt 2>&1
grep -E '==|p50' $O/tail.txt
LD_LIBRARY_PATH=$N/lib OCL_ICD_VENDORS=$V $N/server/rgpud --listen 127.0.0.1:7799 --log-level debug > $O/rgpud-tcp.log 2>&1 &
pid=$!; for i in $(seq 50); do grep -q "listening" $O/rgpud-tcp.log && break; sleep 0.1; done
for s in 1048576 16777216; do LD_LIBRARY_PATH=$N/lib OCL_ICD_VENDORS=$d RGPU_SERVER=127.0.0.1:7799 /tmp/read_probe $s 200; done | tee $O/read_probe.txt
kill $pid; wait $pid 2>/dev/null
grep -c 'pinned staging for socket reads' $O/rgpud-tcp.log
cd $O && tar czf logs.tar.gz rgpud-*.log && rm -f rgpud-*.log
