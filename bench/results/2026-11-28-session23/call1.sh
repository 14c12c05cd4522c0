#!/usr/bin/env bash
# Session 23, call 1 (carry .carry-new): held launches of one wave or less as one slice
# (--whole-wave, on by default) against preemptible runs (--whole-wave=0), same call.
# (a) BE `short` of 0.2 ms launches, 8 work-groups per compute unit (one wave at 256
# work-items), beside the Poisson, periodic and Pareto 370 us LC; (b) BE `short` of 1 ms
# launches, 4 work-groups per compute unit (half a wave), beside the Poisson LC. fair and
# fair+shared, 3 s runs, native solo runs in each.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
run() {  # name, then rgpu-bench-sharing options
  local n=$1; shift
  timeout 280 bash bench/sharing_on_device.sh .carry-new $OUT/$n --matrix "$@" --duration 3 --timeout 25 > /dev/null 2>&1
  echo "$n rc=$?"
  grep -B2 -A12 'Matrix (LC p99' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---'
  grep -A8 'solo runs' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---'
  mkdir -p $OUT/logs-$n && tar -xzf $OUT/$n/rgpud-logs.tar.gz -C $OUT/logs-$n 2>/dev/null
  grep -r 'tenant be scheduling' $OUT/logs-$n | sed 's/^.*logs-[a-z0-9]*\/rgpud-//; s/ info rgpud: tenant be scheduling (fair)//' | cut -c1-40,100-
  rm -f $OUT/$n/device-log.txt $OUT/$n/progress.txt $OUT/$n/rgpud-logs.tar.gz
  rm -rf $OUT/logs-$n
}
M=native,fair,fair/--whole-wave=0,fair+shared,fair+shared/--whole-wave=0
run w02 --scenarios mx_lc_poisson_370,mx_lc_periodic_370,mx_lc_pareto_370,mx_be_short,mx_poisson_370_short,mx_periodic_370_short,mx_pareto_370_short \
  --be-short-ms 0.2 --be-short-groups-per-cu 8 --modes $M
run w1 --scenarios mx_lc_poisson_370,mx_be_short,mx_poisson_370_short \
  --be-short-ms 1 --be-short-groups-per-cu 4 --modes $M
