#!/usr/bin/env bash
# Session 22, call 1 (carry .carry-new = the chained held launches, uncommitted tree on
# e5f29b4): the membound cells, their LC-alone runs and 2 LC + 2 BE, native, fair+shared and
# fair, each with and without --chain-held, 3 s runs; the rgpud logs' chained counts.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
S=mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_pareto_370,mx_be_membound
S=$S,mx_periodic_370_membound,mx_poisson_370_membound,mx_pareto_370_membound,mx_2lc2be_poisson_370
timeout 420 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix --scenarios $S \
  --modes native,fair+shared,fair+shared/--chain-held=0,fair,fair/--chain-held=0 \
  --duration 3 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -B2 -A14 'Matrix (LC p99' $OUT/mx/sharing.md | grep '^|'
grep -A8 'solo runs' $OUT/mx/sharing.md | grep '^|'
mkdir -p $OUT/logs && tar -xzf $OUT/mx/rgpud-logs.tar.gz -C $OUT/logs 2>/dev/null
grep -r 'tenant be.* chained' $OUT/logs | sed 's/.*logs\///' | cut -c1-60,200- | head -40
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
