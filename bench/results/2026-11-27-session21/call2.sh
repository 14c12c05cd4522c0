#!/usr/bin/env bash
# Session 21, call 2 (carry .carry-new = the spin-feed build): the matrix's membound cells and
# LC-alone cells, native and through rgpud under fair+shared and fair, with the dispatcher and
# completion watcher spinning while held slices are on the device beside an LC tenant (the new
# default on 8+ CPUs) and without (--spin-feed=0, the old behaviour), and fair+shared with
# 25 us slices; then shared_probe.cpp (native, one context, no rgpu).
set -u
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
timeout 420 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --scenarios mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_be_membound,mx_periodic_370_membound,mx_poisson_370_membound,mx_bursty_370_membound,mx_pareto_370_membound,mx_poisson_50_membound \
  --modes native,fair+shared,fair+shared/--spin-feed=0,fair+shared/--lc-slice-us=25,fair,fair/--spin-feed=0 --duration 2.5 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -B2 -A16 'Matrix (LC p99' $OUT/mx/sharing.md | grep '^|'
grep -A10 'solo runs' $OUT/mx/sharing.md | grep '^|'
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
g++ -O2 -std=c++20 -o /tmp/shared_probe bench/results/2026-11-27-session21/shared_probe.cpp -lOpenCL -lpthread
OCL_ICD_VENDORS=$V timeout 150 /tmp/shared_probe NVIDIA 2 370 2048 > $O/shared_probe.txt 2>&1
echo "probe rc=$?"; cat $O/shared_probe.txt
