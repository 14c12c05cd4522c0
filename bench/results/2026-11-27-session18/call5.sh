#!/usr/bin/env bash
# Session 18, call 5 (device tool, carry .carry-new = 099c5cf, control rings): the whole "Latest
# results" command of docs/performance.md, then the same command with the rings off
# (RGPU_RING=0, same binaries), then the driver probe.
set -u
N=.carry-new
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
for ring in 1 0; do
  d=$OUT/ovh; [ $ring = 0 ] && d=$OUT/ovh-ring0
  RGPU_RING=$ring timeout 280 bash bench/on_device.sh $N $d --iterations 5000 --async-launches 100000 \
    --max-bytes 256M --matmul-budget 1 --link-delay-ms 0.5,5,25 --worker-timeout 150 \
    --request-us 10,50,370,2000,10000 > $OUT/ovh-ring$ring.log 2>&1
  echo "ovh ring=$ring rc=$?"
done
OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/bench/rgpu-probe-driver --platform NVIDIA > $OUT/ovh/probe-nvidia.json 2>&1
cd $OUT && tar czf ovh.tar.gz ovh ovh-ring0 && rm -rf ovh ovh-ring0
