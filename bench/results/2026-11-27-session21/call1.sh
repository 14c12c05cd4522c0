#!/usr/bin/env bash
# Session 21, call 1: in one device context, what an LC request pays beside memory-bound BE
# slices for each way BE work could give way (shared_probe.cpp, native, no rgpu), then the
# matrix's membound cells through rgpud (carry .carry-new = HEAD) in the context group,
# with today's slices (2 x 50 us) and with 2 x 25 us.
set -u
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
g++ -O2 -std=c++20 -o /tmp/shared_probe bench/results/2026-11-27-session21/shared_probe.cpp -lOpenCL -lpthread
OCL_ICD_VENDORS=$V timeout 200 /tmp/shared_probe NVIDIA 3 370 2048 > $O/shared_probe.txt 2>&1
echo "probe rc=$?"; cat $O/shared_probe.txt
timeout 330 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --scenarios mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_be_membound,mx_periodic_370_membound,mx_poisson_370_membound,mx_bursty_370_membound,mx_pareto_370_membound,mx_poisson_50_membound \
  --modes native,fair+shared,fair+shared/--lc-slice-us=25 --duration 3 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -B2 -A16 'Matrix (LC p99' $OUT/mx/sharing.md | grep '^|'
grep -A10 'solo runs' $OUT/mx/sharing.md | grep '^|'
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
