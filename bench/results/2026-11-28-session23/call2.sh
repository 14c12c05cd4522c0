#!/usr/bin/env bash
# Session 23, call 2 (carry .carry-new, the same build as call 1): --whole-wave on and off
# again, with BE kinds whose launches are one wave or less: (a) the matrix's `long` (one
# work-group of 25 ms per compute unit) beside the Poisson and periodic 370 us LC; (b) `short`
# of 1 ms launches, 4 work-groups per compute unit (call 1's w1 again, and Pareto arrivals);
# (c) `short` of 0.5 ms launches, 8 per compute unit (one wave). 3 s runs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
run() {  # name, then rgpu-bench-sharing options
  local n=$1; shift
  timeout 280 bash bench/sharing_on_device.sh .carry-new $OUT/$n --matrix "$@" --duration 3 --timeout 25 > /dev/null 2>&1
  echo "$n rc=$?"
  grep -B2 -A12 'Matrix (LC p99' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---'
  grep -A8 'solo runs' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---'
  rm -f $OUT/$n/device-log.txt $OUT/$n/progress.txt $OUT/$n/rgpud-logs.tar.gz $OUT/$n/sharing.json
}
M=native,fair,fair/--whole-wave=0,fair+shared,fair+shared/--whole-wave=0
run long --scenarios mx_lc_poisson_370,mx_lc_periodic_370,mx_be_long,mx_poisson_370_long,mx_periodic_370_long --modes $M
run w1 --scenarios mx_lc_poisson_370,mx_lc_pareto_370,mx_be_short,mx_poisson_370_short,mx_pareto_370_short \
  --be-short-ms 1 --be-short-groups-per-cu 4 --modes $M
run w05 --scenarios mx_lc_poisson_370,mx_be_short,mx_poisson_370_short \
  --be-short-ms 0.5 --be-short-groups-per-cu 8 --modes $M
