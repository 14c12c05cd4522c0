#!/usr/bin/env bash
# Session 21, call 3 (carry .carry-new = spin feed + drain): the membound cells, LC-alone cells
# and 2 LC + 2 BE, native and through rgpud in the context group (fair+shared): with the LC
# launch waiting for its context's short slices (the new default), without (--lc-drain-us=0),
# and with slices of 30 us.
set -u
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
timeout 560 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --scenarios mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_be_membound,mx_be_short,mx_periodic_370_membound,mx_poisson_370_membound,mx_bursty_370_membound,mx_pareto_370_membound,mx_poisson_50_membound,mx_2lc2be_poisson_370 \
  --modes native,fair+shared,fair+shared/--lc-drain-us=0,fair+shared/--lc-slice-us=30 --duration 3 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -B2 -A16 'Matrix (LC p99' $OUT/mx/sharing.md | grep '^|'
grep -A12 'solo runs' $OUT/mx/sharing.md | grep '^|'
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
