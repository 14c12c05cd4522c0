#!/usr/bin/env bash
# Session 35, call 5 (carry .carry-new): does a 50 us kernel after an idle gap take longer on
# the device than back to back? (rgpud charges the 50 us LC tenant alone 1.13-1.17 of the
# kernel's back-to-back cost.) rgpu-probe-driver --spaced, natively, twice.
set -u
N=$(cd .carry-new && pwd)
. bench/device_vendors.sh
V=$(device_vendors $OUT/env.txt)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for i in 1 2; do
  OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/bench/rgpu-probe-driver --platform NVIDIA --spaced > $OUT/spaced-$i.json 2>&1
  echo "spaced $i rc=$?"; cat $OUT/spaced-$i.json
done
