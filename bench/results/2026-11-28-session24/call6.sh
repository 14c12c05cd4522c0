#!/usr/bin/env bash
# Session 24, call 6 (carry .carry-new = dd661a9): --gate-chained on against =0 in the same
# runs on a shape call 4 did not try: BE launches of one 80 us wave with ONE launch in flight
# (a closed loop, --be-depth 1) beside the Poisson 370 us LC.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
n=g80d1
timeout 280 bash bench/sharing_on_device.sh .carry-new $OUT/$n --matrix --scenarios mx_lc_poisson_370,mx_be_brief,mx_poisson_370_brief \
  --be-brief-ms 0.08 --be-depth 1 --modes native,fair,fair/--gate-chained=0,fair+shared,fair+shared/--gate-chained=0 \
  --duration 3 --timeout 25 > /dev/null 2>&1
echo "$n rc=$?"
grep -B2 -A12 'Matrix (LC p99' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---' | grep -v options
grep -A8 'solo runs' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---'
mkdir -p $OUT/logs && tar -xzf $OUT/$n/rgpud-logs.tar.gz -C $OUT/logs 2>/dev/null
grep -r 'tenant be scheduling' $OUT/logs | sed 's/^.*logs\/rgpud-//; s/ info rgpud: tenant be scheduling (fair)//; s/2026-[0-9T:.-]*//; s/ms device time.*chained/ms, chained/'
rm -rf $OUT/logs $OUT/$n/device-log.txt $OUT/$n/progress.txt $OUT/$n/rgpud-logs.tar.gz $OUT/$n/sharing.json
