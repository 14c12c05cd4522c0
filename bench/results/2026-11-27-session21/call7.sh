#!/usr/bin/env bash
# Session 21, call 7 (carry .carry-new = 5a110e2): the membound cells and the LC alone, native,
# fair+shared (drain on, the default) and fair+shared with --lc-drain-us=0, two whole rounds in
# one call (rounds a and b), 3 s runs.
set -u
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
S=mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_be_membound
S=$S,mx_periodic_370_membound,mx_poisson_370_membound,mx_bursty_370_membound,mx_pareto_370_membound,mx_poisson_50_membound,mx_2lc2be_poisson_370,mx_be_short
for r in a b; do
  timeout 280 bash bench/sharing_on_device.sh .carry-new $OUT/mx-$r --matrix \
    --scenarios $S --modes native,fair+shared,fair+shared/--lc-drain-us=0 --duration 3 --timeout 25 > /dev/null 2>&1
  echo "mx-$r rc=$?"
  grep -B2 -A16 'Matrix (LC p99' $OUT/mx-$r/sharing.md | grep '^|'
  grep -A10 'solo runs' $OUT/mx-$r/sharing.md | grep '^|'
  rm -f $OUT/mx-$r/device-log.txt $OUT/mx-$r/progress.txt $OUT/mx-$r/rgpud-logs.tar.gz
done
