#!/usr/bin/env bash
# Session 18, call 1 (device tool, carry .carry-new = HEAD 08bd980): the whole "Latest results"
# command of docs/performance.md (issue 12, outcome 6), then the driver probe.
set -u
N=.carry-new
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
timeout 420 bash bench/on_device.sh $N $OUT/ovh --iterations 5000 --async-launches 100000 \
  --max-bytes 256M --matmul-budget 1 --link-delay-ms 0.5,5,25 --worker-timeout 150 \
  --request-us 10,50,370,2000,10000 > $OUT/ovh.log 2>&1
echo "ovh rc=$?"
OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/bench/rgpu-probe-driver --platform NVIDIA > $OUT/ovh/probe-nvidia.json 2>&1
cd $OUT && tar czf ovh.tar.gz ovh && rm -rf ovh
