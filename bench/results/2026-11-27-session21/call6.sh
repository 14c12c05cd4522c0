#!/usr/bin/env bash
# Session 21, call 6 (carry .carry-new = the build committed with the drain and spin feed):
# a wider part of the matrix, native, fair (separate contexts), fair+shared (context group,
# new defaults) and fair+shared with the LC drain off (--lc-drain-us=0), 3 s runs.
set -u
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
S=mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_lc_poisson_2000
S=$S,mx_be_membound,mx_be_short,mx_be_long
S=$S,mx_periodic_370_membound,mx_poisson_370_membound,mx_bursty_370_membound,mx_pareto_370_membound,mx_poisson_50_membound,mx_poisson_2000_membound
S=$S,mx_periodic_370_short,mx_poisson_370_short,mx_poisson_370_long,mx_2lc2be_poisson_370
timeout 570 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --scenarios $S --modes native,fair,fair+shared,fair+shared/--lc-drain-us=0 --duration 3 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -B2 -A24 'Matrix (LC p99' $OUT/mx/sharing.md | grep '^|'
grep -A14 'solo runs' $OUT/mx/sharing.md | grep '^|'
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
