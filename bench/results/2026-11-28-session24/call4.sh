#!/usr/bin/env bash
# Session 24, call 4 (carry .carry-new, made from the tree with --gate-chained, uncommitted):
# a held launch of one slice behind another goes onto the application's queue at once,
# waiting for a gate the dispatcher opens (fair, fair+shared), against --gate-chained=0 in the
# same run: BE launches of one 30 us wave (2 rounds) and of 0.2 ms (the matrix's `brief`)
# beside the Poisson 370 us LC.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
run() {  # name, then rgpu-bench-sharing options
  local n=$1; shift
  timeout 280 bash bench/sharing_on_device.sh .carry-new $OUT/$n --matrix "$@" --duration 3 --timeout 25 > /dev/null 2>&1
  echo "$n rc=$?"
  grep -B2 -A12 'Matrix (LC p99' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---' | grep -v options
  grep -A8 'solo runs' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---'
  mkdir -p $OUT/logs-$n && tar -xzf $OUT/$n/rgpud-logs.tar.gz -C $OUT/logs-$n 2>/dev/null
  grep -r 'tenant be scheduling' $OUT/logs-$n | sed 's/^.*logs-[a-z0-9-]*\/rgpud-//; s/ info rgpud: tenant be scheduling (fair)//; s/2026-[0-9T:.-]*//; s/ms device time.*chained/ms, chained/'
  rm -rf $OUT/logs-$n $OUT/$n/device-log.txt $OUT/$n/progress.txt $OUT/$n/rgpud-logs.tar.gz $OUT/$n/sharing.json
}
M=native,fair,fair/--gate-chained=0,fair+shared,fair+shared/--gate-chained=0
run g30a --scenarios mx_lc_poisson_370,mx_be_brief,mx_poisson_370_brief --be-brief-ms 0.03 --modes $M
run g200 --scenarios mx_lc_poisson_370,mx_be_brief,mx_poisson_370_brief,mx_lc_pareto_370,mx_pareto_370_brief --modes $M
run g30b --scenarios mx_lc_poisson_370,mx_be_brief,mx_poisson_370_brief --be-brief-ms 0.03 --modes $M
