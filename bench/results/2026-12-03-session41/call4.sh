#!/usr/bin/env bash
# Session 41, call 4 (carry .carry-new with this session's probe): call 3's --turns found the
# driver threads that spin in `gated` still spinning in the later `free` rounds of the same
# contexts. Here --turns with `held` first (contexts that never saw a user event), then
# --trigger (which single thing done once leaves a context's driver thread spinning), twice.
set -u
N=$(cd .carry-new && pwd)
. bench/device_vendors.sh
V=$(device_vendors $OUT/env.txt)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
p() { OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib timeout 60 $N/bench/rgpu-probe-driver --platform NVIDIA "$@"; }
p --turns --held-first > $OUT/turns-held-first.json 2>&1; echo "turns rc=$?"; cat $OUT/turns-held-first.json
for i in 1 2; do p --trigger > $OUT/trigger-$i.json 2>&1; echo "trigger rc=$?"; cat $OUT/trigger-$i.json; done
