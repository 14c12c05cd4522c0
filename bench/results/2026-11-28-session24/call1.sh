#!/usr/bin/env bash
# Session 24, call 1 (carry .carry-new, main's code): shapes the matrix does not vary.
# BE launches far shorter than a request (one wave of 30 us and 80 us; `brief` with
# --be-brief-ms), one launch in flight instead of two, and LC requests much denser (mean gap
# 1 ms) and sparser (20 ms) than the matrix's 4 ms, beside `membound`.
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
M=native,fair,fair+shared
run b30 --scenarios mx_lc_poisson_370,mx_be_brief,mx_poisson_370_brief --be-brief-ms 0.03 --modes $M
run b80d1 --scenarios mx_be_brief,mx_poisson_370_brief --be-brief-ms 0.08 --be-depth 1 --modes $M
run gap1 --scenarios mx_lc_poisson_370,mx_be_membound,mx_poisson_370_membound,mx_poisson_370_short --lc-gap-ms 1 --modes $M
run gap20 --scenarios mx_lc_poisson_370,mx_poisson_370_membound,mx_poisson_370_short --lc-gap-ms 20 --modes $M
