#!/usr/bin/env bash
# Session 23, call 7 (carry .carry-new = main after the review change): the cells of the
# context group that met or nearly met both targets (Poisson 370 + membound, Poisson and
# Pareto 370 + brief), native and fair+shared, 3 s runs, two rounds: how often they hold.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for r in a b; do
  timeout 200 bash bench/sharing_on_device.sh .carry-new $OUT/$r --matrix \
    --scenarios mx_lc_poisson_370,mx_lc_pareto_370,mx_be_brief,mx_be_membound,mx_poisson_370_brief,mx_pareto_370_brief,mx_poisson_370_membound \
    --modes native,fair+shared --duration 3 --timeout 25 > /dev/null 2>&1
  echo "$r rc=$?"
  grep -B2 -A12 'Matrix (LC p99' $OUT/$r/sharing.md | grep '^|' | grep -v '^|---'
  rm -f $OUT/$r/device-log.txt $OUT/$r/progress.txt $OUT/$r/rgpud-logs.tar.gz $OUT/$r/sharing.json
done
