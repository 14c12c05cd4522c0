#!/usr/bin/env bash
# Session 22, call 8 (carry .carry-new = 73a7305): the membound cells of the group on another
# lease, fair+shared with and without --chain-held, 3 s runs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 200 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --scenarios mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_pareto_370,mx_be_membound,mx_periodic_370_membound,mx_poisson_370_membound,mx_pareto_370_membound \
  --modes native,fair+shared,fair+shared/--chain-held=0 --duration 3 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -B2 -A10 'Matrix (LC p99' $OUT/mx/sharing.md | grep '^|' | grep -v '^|---'
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt $OUT/mx/rgpud-logs.tar.gz
