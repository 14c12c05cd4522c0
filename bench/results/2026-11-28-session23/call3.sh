#!/usr/bin/env bash
# Session 23, call 3 (carry .carry-new): --whole-wave as kept (a launch of one wave or less
# goes as one slice, except beside an active LC tenant when its kernel's wave lasts over
# --lc-run-us and narrow runs pay) against --whole-wave=0, same call: BE `short` of 0.2, 0.5
# and 1 ms launches (8, 8 and 4 work-groups per compute unit) beside the 370 us LC.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
run() {  # name, then rgpu-bench-sharing options
  local n=$1; shift
  timeout 280 bash bench/sharing_on_device.sh .carry-new $OUT/$n --matrix "$@" --duration 3 --timeout 25 > /dev/null 2>&1
  echo "$n rc=$?"
  grep -B2 -A12 'Matrix (LC p99' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---'
  grep -A8 'solo runs' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---'
  mkdir -p $OUT/logs-$n && tar -xzf $OUT/$n/rgpud-logs.tar.gz -C $OUT/logs-$n 2>/dev/null
  grep -r 'tenant be scheduling' $OUT/logs-$n | sed 's/^.*logs-[a-z0-9]*\/rgpud-//; s/ info rgpud: tenant be scheduling (fair)//; s/2026-[0-9T:.-]*//; s/ms device time.*chained/ms, chained/'
  rm -rf $OUT/logs-$n $OUT/$n/device-log.txt $OUT/$n/progress.txt $OUT/$n/rgpud-logs.tar.gz $OUT/$n/sharing.json
}
M=native,fair,fair/--whole-wave=0,fair+shared,fair+shared/--whole-wave=0
run w02 --scenarios mx_lc_poisson_370,mx_lc_periodic_370,mx_be_short,mx_poisson_370_short,mx_periodic_370_short \
  --be-short-ms 0.2 --be-short-groups-per-cu 8 --modes $M
run w05 --scenarios mx_lc_poisson_370,mx_be_short,mx_poisson_370_short \
  --be-short-ms 0.5 --be-short-groups-per-cu 8 --modes $M
run w1 --scenarios mx_lc_poisson_370,mx_lc_pareto_370,mx_be_short,mx_poisson_370_short,mx_pareto_370_short \
  --be-short-ms 1 --be-short-groups-per-cu 4 --modes $M
