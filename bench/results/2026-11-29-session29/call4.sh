#!/usr/bin/env bash
# Session 29, call 4: what a thread watching events costs another thread's enqueues on
# NVIDIA's OpenCL, by how it watches (rgpu-probe-driver --pollers, three invocations), and
# how much later clWaitForEvents returns than a thread asking for the status without pause.
set -u
N=.carry-new
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for r in 1 2 3; do
  OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/bench/rgpu-probe-driver --platform NVIDIA --count 20000 --pollers | tee $OUT/pollers$r.json
done
