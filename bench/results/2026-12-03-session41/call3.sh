#!/usr/bin/env bash
# Session 41, call 3 (carry .carry-new of this session's build: rgpud as 2d28a42, the probe
# with --turns): (1) natively, four contexts taking 8 ms turns with a closed loop of ~30 us
# kernels two deep each: free / gated behind user events / held in the tenant's thread,
# every driver thread's CPU (what spins in each waiting tenant's context under `fair`);
# (2) the whole matrix at this build, native / fair+shared / fair, native solo shapes twice.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
N=$(cd .carry-new && pwd)
. bench/device_vendors.sh
V=$(device_vendors $OUT/env.txt)
OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib timeout 60 $N/bench/rgpu-probe-driver --platform NVIDIA --turns > $OUT/turns.json 2>&1
echo "turns rc=$?"; cat $OUT/turns.json
timeout 500 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --modes native,fair+shared,fair --solo-repeats 2 --duration 2.5 --timeout 25 > $OUT/mx.log 2>&1
echo "mx rc=$?"
tail -3 $OUT/mx.log
grep -E "meet both" $OUT/mx/sharing.md | head
rm -f $OUT/mx/device-log.txt $OUT/mx/rgpud-logs.tar.gz
