#!/usr/bin/env bash
# Session 48, call 2 (carry .carry-new of 85b7f37, with rgpu-probe-driver): docs/performance.md's
# "Latest results" command and the driver probe, for the docs' generated "current" tables
# (issue 12, outcome 6: every figure from one H200 run).
set -u
N=.carry-new
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
timeout 400 bash bench/on_device.sh $N $OUT/ovh --iterations 5000 --async-launches 100000 \
  --max-bytes 256M --matmul-budget 1 --link-delay-ms 0.5,5,25 --worker-timeout 150 \
  --request-us 10,50,370,2000,10000 > $OUT/ovh.log 2>&1
echo "ovh rc=$?"
OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/bench/rgpu-probe-driver --platform NVIDIA > $OUT/ovh/probe-nvidia.json 2>&1
grep -A40 '## Targets' $OUT/ovh/overhead.md | grep '^|'
grep -A6 '## Asynchronous' $OUT/ovh/overhead.md | grep '^|'
cd $OUT && tar czf res.tar.gz ovh ovh.log && rm -rf ovh
