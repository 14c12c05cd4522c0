#!/usr/bin/env bash
# Session 25, call 1 (carry .carry-new, made from the tree with --gate-first, uncommitted): a
# held launch of one slice with nothing unfinished before it on its queue goes onto the
# application's queue at once behind a gate (fair, fair+shared), against --gate-first=0 in the
# same run: a closed loop of one BE launch in flight (--be-depth 1) of one 80 us wave, of the
# matrix's `tiny` (30 us) and `brief` (0.2 ms), beside the Poisson 370 us LC; then the
# matrix's own depth (2) for `tiny` to check it does not lose there.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
run() {  # name, then rgpu-bench-sharing options
  local n=$1; shift
  timeout 200 bash bench/sharing_on_device.sh .carry-new $OUT/$n --matrix "$@" --duration 3 --timeout 25 > /dev/null 2>&1
  echo "$n rc=$?"
  grep -B2 -A12 'Matrix (LC p99' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---' | grep -v options
  grep -A8 'solo runs' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---'
  mkdir -p $OUT/logs-$n && tar -xzf $OUT/$n/rgpud-logs.tar.gz -C $OUT/logs-$n 2>/dev/null
  grep -r 'tenant be scheduling' $OUT/logs-$n | sed 's/^.*logs-[a-z0-9-]*\/rgpud-//; s/ info rgpud: tenant be scheduling (fair)//; s/2026-[0-9T:.-]*//; s/ms device time.*chained/ms, chained/'
  rm -rf $OUT/logs-$n $OUT/$n/device-log.txt $OUT/$n/progress.txt $OUT/$n/rgpud-logs.tar.gz $OUT/$n/sharing.json
}
M=native,fair,fair/--gate-first=0,fair+shared,fair+shared/--gate-first=0
run d1tiny --scenarios mx_lc_poisson_370,mx_be_tiny,mx_poisson_370_tiny --be-depth 1 --modes $M
run d1w80 --scenarios mx_lc_poisson_370,mx_be_brief,mx_poisson_370_brief --be-brief-ms 0.08 --be-depth 1 --modes $M
run d1brief --scenarios mx_lc_poisson_370,mx_be_brief,mx_poisson_370_brief,mx_lc_pareto_370,mx_pareto_370_brief --be-depth 1 --modes $M
run d2tiny --scenarios mx_lc_poisson_370,mx_be_tiny,mx_poisson_370_tiny --modes $M
