#!/usr/bin/env bash
# Session 49, call 5 (carry .carry-new of 989c2b5 plus the aside thread's nap as a ring sleeper,
# with call5/aside_probe.cpp built as bench/aside-probe, and call 4's rgpud as rgpud-tick): one
# thread sits in clFinish of a ~1 s one-work-item kernel while another makes a blocking 4-byte
# read on a second queue every 0.5 ms; the reads' latency, natively and through rgpud over the
# Unix socket (the nap, then the 250 us tick without wake bytes), two rounds each.
set -u
N=$(pwd)/.carry-new
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
echo "== native" | tee $OUT/probe.txt
env OCL_ICD_VENDORS=$V timeout 60 $N/bench/aside-probe NVIDIA 1200000000 2>&1 | tee -a $OUT/probe.txt
mkdir -p /tmp/icd && echo "$N/client/librgpu-icd.so" > /tmp/icd/rgpu.icd
for d in rgpud rgpud-tick; do
  env OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/server/$d --listen unix:/tmp/rg-$d.sock \
      --platform NVIDIA > $OUT/$d.log 2>&1 &
  pid=$!
  sleep 2
  echo "== $d" | tee -a $OUT/probe.txt
  env OCL_ICD_VENDORS=/tmp/icd LD_LIBRARY_PATH=$N/lib RGPU_SERVER=unix:/tmp/rg-$d.sock timeout 60 \
      $N/bench/aside-probe rgpu 1200000000 2>&1 | tee -a $OUT/probe.txt
  kill $pid; wait $pid
done
