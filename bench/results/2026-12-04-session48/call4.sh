#!/usr/bin/env bash
# Session 48, call 4 (carry .carry-new with bench/rgpu-probe-queues): in session 47's lab run
# with a context group, no persistent kernel saw its stop flag (all ran to their poll limit).
# Natively: does a write on another queue of one context reach a running kernel, by the number
# of queues in the context, the queue written on, and CUDA_DEVICE_MAX_CONNECTIONS?
set -u
N=.carry-new
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
P="env OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/bench/rgpu-probe-queues --platform NVIDIA --max-polls 4000000"
timeout 150 $P > $OUT/last.json 2>&1; echo "last rc=$?"
timeout 100 $P --write-queue 1 --counts 2,8,16,32,64 > $OUT/second.json 2>&1; echo "second rc=$?"
timeout 100 env CUDA_DEVICE_MAX_CONNECTIONS=32 $P --counts 2,8,16,32,33,48,64 > $OUT/conn32.json 2>&1; echo "conn32 rc=$?"
cat $OUT/last.json $OUT/second.json $OUT/conn32.json | grep -o '"queues.*'
