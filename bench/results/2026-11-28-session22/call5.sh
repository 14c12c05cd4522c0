#!/usr/bin/env bash
# Session 22, call 5 (carry .carry-new = call 4's tree plus: the first run of a launch may
# queue behind a run of everything left of the launch before it, taking that run's stop word):
# (a) 0.2 ms `short` launches (preemptible runs) beside the Poisson and periodic LC, fair and
# fair+shared with and without --chain-held; (b) the membound cells, fair+shared with and
# without; 3 s runs, native solo runs in each.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
run() {  # name, then rgpu-bench-sharing options
  local n=$1; shift
  timeout 270 bash bench/sharing_on_device.sh .carry-new $OUT/$n --matrix "$@" --duration 3 --timeout 25 > /dev/null 2>&1
  echo "$n rc=$?"
  grep -B2 -A12 'Matrix (LC p99' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---'
  grep -A8 'solo runs' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---'
  mkdir -p $OUT/logs-$n && tar -xzf $OUT/$n/rgpud-logs.tar.gz -C $OUT/logs-$n 2>/dev/null
  grep -r 'tenant be scheduling' $OUT/logs-$n | sed 's/^.*logs-[a-z0-9]*\/rgpud-//; s/ info rgpud: tenant be scheduling (fair)//' | cut -c1-40,100-
  rm -f $OUT/$n/device-log.txt $OUT/$n/progress.txt $OUT/$n/rgpud-logs.tar.gz
}
run s02 --scenarios mx_lc_poisson_370,mx_lc_periodic_370,mx_be_short,mx_poisson_370_short,mx_periodic_370_short \
  --be-short-ms 0.2 --be-short-groups-per-cu 8 \
  --modes native,fair,fair/--chain-held=0,fair+shared,fair+shared/--chain-held=0
run mem --scenarios mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_pareto_370,mx_be_membound,mx_periodic_370_membound,mx_poisson_370_membound,mx_pareto_370_membound \
  --modes native,fair+shared,fair+shared/--chain-held=0
