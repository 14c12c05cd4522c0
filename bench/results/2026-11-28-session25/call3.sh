#!/usr/bin/env bash
# Session 25, call 3 (carry .carry-new = 0fbe85e): the LC tenant alone, where call 2 read
# about one context switch more than native at p99 under fair (Pareto 370 us 0.585 against
# 0.448 ms, Poisson 50 us 0.292 against 0.152): two rounds of native, fair, fair+shared and
# fair with the dispatcher and watcher not spinning (--spin-feed=0), with rgpud's request
# traces (RGPU_TRACE_REQUESTS=1: launch frame to enqueued, the driver's launch call, the
# device's wait and run).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for r in a b; do
  RGPU_TRACE_REQUESTS=1 timeout 280 bash bench/sharing_on_device.sh .carry-new $OUT/$r --matrix \
    --scenarios mx_lc_pareto_370,mx_lc_poisson_50,mx_lc_periodic_370 \
    --modes native,fair,fair+shared,fair/--spin-feed=0 --duration 3 --timeout 25 > /dev/null 2>&1
  echo "$r rc=$?"
  grep -A6 'solo runs' $OUT/$r/sharing.md | grep '^|' | grep -v '^|---'
  mkdir -p $OUT/logs-$r && tar -xzf $OUT/$r/rgpud-logs.tar.gz -C $OUT/logs-$r
  for f in $OUT/logs-$r/*.log; do echo "== $(basename $f)"; grep -E 'request trace|lc trace' $f | cut -c30-700; done
  rm -rf $OUT/logs-$r $OUT/$r/device-log.txt $OUT/$r/progress.txt $OUT/$r/sharing.json
done
