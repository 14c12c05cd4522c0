#!/usr/bin/env bash
# Session 26, call 8 (carry .carry-new as call 7): a held
# launch of one slice that the dispatcher would take the moment it is queued goes on the
# device from the session's thread without a gate, against --gate-at-once=0 in the same run:
# the `tiny` (30 us) BE tenant beside the Poisson, periodic and Pareto 370 us LC, and `brief`
# (0.2 ms) beside the Poisson LC; 3 s per run, the matrix's depth; --seed 2 (other due times).
set -u
N=.carry-new
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
M=native,fair,fair/--gate-at-once=0,fair+shared,fair+shared/--gate-at-once=0
timeout 560 bash bench/sharing_on_device.sh $N $OUT/ao --matrix --modes $M --duration 3 --timeout 25 --seed 2 \
  --scenarios mx_lc_poisson_370,mx_lc_periodic_370,mx_lc_pareto_370,mx_be_tiny,mx_be_brief,mx_poisson_370_tiny,mx_periodic_370_tiny,mx_pareto_370_tiny,mx_poisson_370_brief \
  > /dev/null 2>&1
echo "ao rc=$?"
grep -B2 -A16 'Matrix (LC p99' $OUT/ao/sharing.md | grep '^|' | grep -v '^|---' | grep -v options
mkdir -p $OUT/logs && tar -xzf $OUT/ao/rgpud-logs.tar.gz -C $OUT/logs 2>/dev/null
grep -r 'tenant be scheduling' $OUT/logs | sed 's/^.*logs\/rgpud-//; s/ info rgpud: tenant be scheduling (fair)//; s/2026-[0-9T:.-]*//' | cut -c1-330 | tee $OUT/be-scheduling.txt
rm -rf $OUT/logs $OUT/ao/device-log.txt $OUT/ao/progress.txt
