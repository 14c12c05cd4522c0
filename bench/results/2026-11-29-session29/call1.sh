#!/usr/bin/env bash
# Session 29, call 1: what makes one event-less enqueue cost NVIDIA's driver more in rgpud than
# in an application? rgpu-probe-driver's alternating variants (the kernel rewritten for
# slicing, the original with the two hidden parameters only, memory touched / a system call
# between enqueues, a second thread asking for an event's status), three invocations.
set -u
N=.carry-new
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
nproc | tee $OUT/nproc.txt
for r in 1 2 3; do
  OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/bench/rgpu-probe-driver --platform NVIDIA --count 50000 > $OUT/probe$r.json 2>&1
  cat $OUT/probe$r.json | tail -3
done
