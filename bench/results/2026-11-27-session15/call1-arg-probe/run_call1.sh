#!/usr/bin/env bash
# Session 15, call 1 (run from the repository root on the GPU machine, carry .carry-s15):
#   bash .carry-s15/run_call1.sh .carry-s15 $OUT
# 1. arg_probe: the rewritten kernel against the original, natively (driver and device cost).
# 2. The launch rate under fair (rewritten programs) and fifo (original programs), 100,000
#    launches and bursts of 100, alternating, two rounds each.
# 3. LC tenants alone under native, fifo and fair (sharing matrix's mx_lc_* cells).
C=$1 O=$2
mkdir -p $O
export LD_LIBRARY_PATH="$(cd $C && pwd)/lib:${LD_LIBRARY_PATH:-}"
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/gpu.txt 2>&1; nproc >> $O/gpu.txt
OCL_ICD_VENDORS=$V $C/bench/arg_probe NVIDIA > $O/arg_probe.txt 2>&1
bash bench/ab_on_device.sh $C $O/ab100k 2 100000 fair= fifo=--policy=fifo > /dev/null 2>&1
bash bench/ab_on_device.sh $C $O/ab100 2 100 fair= fifo=--policy=fifo > /dev/null 2>&1
bash bench/sharing_on_device.sh $C $O/lc --matrix --modes native,fifo,fair \
  --scenarios mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_lc_poisson_2000 \
  --duration 3 --timeout 25 > /dev/null 2>&1
cat $O/arg_probe.txt $O/ab100k/summary.md $O/ab100/summary.md
grep -A 12 "^## Matrix" $O/lc/sharing.md
cd $O && tar czf ab.tar.gz ab100k ab100 && rm -rf ab100k ab100
