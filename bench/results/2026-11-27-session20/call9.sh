#!/usr/bin/env bash
# Session 20, call 9 (carry .carry-new = a1fc1f6): the matrix's LC-alone cells and Poisson
# 370 us + membound, modes native and fair, 3 s runs: no scheduler change this session, so a
# check that the transfer and poll changes cost the LC tenant nothing.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 300 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --scenarios mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_poisson_370_membound \
  --modes native,fair --duration 3 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -B2 -A12 'Matrix (LC p99' $OUT/mx/sharing.md | grep '^|'
grep -A10 'solo runs' $OUT/mx/sharing.md | grep '^|'
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
