#!/usr/bin/env bash
# Session 15, call 7: the overhead benchmark as docs/performance.md "Latest results" runs it,
# at b8cfffb, then the driver probe.
#   bash .carry-s15/run_call7.sh .carry-s15 $OUT
C=$1 O=$2
bash bench/on_device.sh $C $O/ovh --iterations 5000 --async-launches 100000 \
  --max-bytes 256M --matmul-budget 1 --link-delay-ms 0.5,5,25 --worker-timeout 150 \
  --request-us 10,50,370,2000,10000 > /dev/null 2>&1
. bench/device_vendors.sh
LD_LIBRARY_PATH=$C/lib OCL_ICD_VENDORS=$(device_vendors /dev/null) $C/bench/rgpu-probe-driver --platform NVIDIA > $O/ovh/probe-nvidia.json 2>&1
grep -A 30 "Targets" $O/ovh/overhead.md | grep "^|" | head -30
ls $O/ovh
