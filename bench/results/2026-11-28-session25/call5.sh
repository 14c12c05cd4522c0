#!/usr/bin/env bash
# Session 25, call 5 (carry .carry-new = 352631f; rgpud and the ICD as at 0fbe85e):
# the documented "Latest results" command of docs/performance.md and the driver probe, one run
# each, for the docs (session 20's call5.sh again: the last such run was a1fc1f6).
set -u
N=.carry-new
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
cat $OUT/gpu.txt
timeout 300 bash bench/on_device.sh $N $OUT/ovh --iterations 5000 --async-launches 100000 \
  --max-bytes 256M --matmul-budget 1 --link-delay-ms 0.5,5,25 --worker-timeout 150 \
  --request-us 10,50,370,2000,10000 > $OUT/ovh.log 2>&1
echo "ovh rc=$?"
OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/bench/rgpu-probe-driver --platform NVIDIA > $OUT/ovh/probe-nvidia.json 2>&1
grep -A40 '## Targets' $OUT/ovh/overhead.md | grep '^|'
cd $OUT && tar czf res.tar.gz ovh ovh.log && rm -rf ovh
