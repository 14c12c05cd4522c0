#!/usr/bin/env bash
# Session 50, call 3 (carry .carry-new of 9067a8a with rgpu-probe-switch): the change of
# context on this driver again (session 11's probe), natively, with 2 ms and 0.5 ms BE
# kernels: the floor that a context per tenant puts under every cell of the matrix.
set -u
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
for us in 2000 500; do
  OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=.carry-new/lib timeout 120 .carry-new/bench/rgpu-probe-switch \
    --platform NVIDIA --count 300 --be-us $us > $OUT/switch-$us.json 2> $OUT/switch-$us.log
  echo "be $us rc=$?"
  python3 -c "import json,sys; d=json.load(open('$OUT/switch-$us.json')); [print(k, {m: v for m, v in c.items() if m.endswith('_us')}) for k, c in d['cases'].items()]"
done
