#!/usr/bin/env bash
# Session 22, call 4 (carry .carry-new = call 1's tree plus: a tenant alone again launches
# directly though launches of it are still held): (a) BE alone in the context group, short
# kinds of 15 ms and 0.2 ms launches; (b) 0.2 ms `short` launches beside the Poisson LC with
# the BE tenant keeping 2 and 8 launches in flight (is its own loop the limit?); 3 s runs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
run() {  # name, then rgpu-bench-sharing options
  local n=$1; shift
  timeout 200 bash bench/sharing_on_device.sh .carry-new $OUT/$n --matrix "$@" --duration 3 --timeout 25 > /dev/null 2>&1
  echo "$n rc=$?"
  grep -B2 -A8 'Matrix (LC p99' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---'
  grep -A6 'solo runs' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---'
  mkdir -p $OUT/logs-$n && tar -xzf $OUT/$n/rgpud-logs.tar.gz -C $OUT/logs-$n 2>/dev/null
  grep -rh 'tenant be scheduling' $OUT/logs-$n | sed 's/^.*rgpud: //'
  rm -f $OUT/$n/device-log.txt $OUT/$n/progress.txt $OUT/$n/rgpud-logs.tar.gz
}
run alone --scenarios mx_lc_poisson_370,mx_be_short,mx_be_membound --modes native,fair+shared,fair
run d2 --scenarios mx_lc_poisson_370,mx_be_short,mx_poisson_370_short --be-short-ms 0.2 --be-short-groups-per-cu 8 --modes native,fair,fair+shared
run d8 --scenarios mx_lc_poisson_370,mx_be_short,mx_poisson_370_short --be-short-ms 0.2 --be-short-groups-per-cu 8 --be-depth 8 --modes native,fair,fair+shared
