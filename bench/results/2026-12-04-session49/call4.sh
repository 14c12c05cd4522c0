#!/usr/bin/env bash
# Session 49, call 4 (carry .carry-new as call 3's: the aside thread and the ring fix): does the
# park watcher or the aside thread (which takes a session's frames during every wait longer
# than 1 ms: the 2 ms LC requests', the BE tenants' waits) cost the sharing matrix anything?
# fair+shared against fair+shared with --serve-aside-us=0 (the behaviour before), on cells
# session 48 met and a few it missed; native beside in round 1; round 2 against round 1's
# native runs, the modes in reverse order. 2.5 s runs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
SC=mx_lc_poisson_370,mx_lc_pareto_370,mx_lc_poisson_2000,mx_be_membound,mx_be_tiny,mx_be_long
SC=$SC,mx_poisson_370_membound,mx_poisson_370_tiny,mx_pareto_370_tiny,mx_poisson_2000_membound
SC=$SC,mx_poisson_370_long,mx_2lc2be_poisson_370
timeout 280 bash bench/sharing_on_device.sh .carry-new $OUT/r1 --matrix --scenarios $SC \
  --modes native,fair+shared,fair+shared/--serve-aside-us=0 \
  --duration 2.5 --timeout 20 > $OUT/r1.log 2>&1
echo "r1 rc=$?"
sed -n '/^## Matrix (LC/,/^Each figure/p' $OUT/r1/sharing.md | grep "^| \`"
timeout 200 bash bench/sharing_on_device.sh .carry-new $OUT/r2 --matrix --scenarios $SC \
  --modes fair+shared/--serve-aside-us=0,fair+shared \
  --baseline $OUT/r1/sharing.json --duration 2.5 --timeout 20 > $OUT/r2.log 2>&1
echo "r2 rc=$?"
sed -n '/^## Matrix (LC/,/^Each figure/p' $OUT/r2/sharing.md | grep "^| \`"
rm -f $OUT/r*/device-log.txt $OUT/r*/progress.txt
