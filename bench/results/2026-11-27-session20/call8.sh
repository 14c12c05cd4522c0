#!/usr/bin/env bash
# Session 20, call 8 (carry .carry-new = 5f71dc5: every session polls 10 s by default): the
# tail probe (a 370 us kernel then a 4-byte blocking read) after 2 s pauses (40 requests)
# and 5 s pauses (24), natively and through rgpud with its defaults.
set -u
O=$OUT
N=$(cd .carry-new && pwd)
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
g++ -O2 -std=c++20 -o /tmp/tail_probe bench/results/2026-11-26-h100-session14/call1-tail/tail_probe.cpp -lOpenCL
d=$(mktemp -d); echo "$N/client/librgpu-icd.so" > $d/rgpu.icd
rm -f /tmp/tp.sock
LD_LIBRARY_PATH=$N/lib OCL_ICD_VENDORS=$V $N/server/rgpud --listen unix:/tmp/tp.sock > $O/rgpud.log 2>&1 &
pid=$!; for i in $(seq 50); do grep -q "listening" $O/rgpud.log && break; sleep 0.1; done
{
for cfg in "370 2000000 40" "370 5000000 24"; do
  set -- $cfg
  echo "== native $cfg"; OCL_ICD_VENDORS=$V /tmp/tail_probe NVIDIA $1 $2 $3
  echo "== rgpu default $cfg"
  LD_LIBRARY_PATH=$N/lib OCL_ICD_VENDORS=$d RGPU_SERVER=unix:/tmp/tp.sock /tmp/tail_probe rgpu $1 $2 $3
done
} > $O/tail.txt 2>&1
kill $pid; wait $pid 2>/dev/null
grep -E '==|p50' $O/tail.txt
grep -i 'poll' $O/rgpud.log | head -3
