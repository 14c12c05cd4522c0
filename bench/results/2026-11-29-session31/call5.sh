#!/usr/bin/env bash
# Session 31, call 5 (.carry-new as call 4): did the unprofiled twins cost the `tiny`
# best-effort tenant beside an LC one (call 4 read BE 0.47-0.58 in its cells, session 30's
# call 4 0.59-0.68)? fair+shared with twins (default) against --twin-queues=0, twice each,
# alternating, on the tiny cells; 2.5 s runs, native solo runs once.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c5 && rm -rf $W && mkdir -p $W
timeout 330 bash bench/sharing_on_device.sh .carry-new $W/mx --matrix \
  --modes native,fair+shared,fair+shared/--twin-queues=0,fair+shared/--twin-queues=1,fair+shared/--twin-queues=0/--launch-thread=1 \
  --scenarios mx_lc_poisson_370,mx_lc_periodic_370,mx_lc_poisson_50,mx_be_tiny,mx_poisson_370_tiny,mx_periodic_370_tiny,mx_poisson_50_tiny \
  --solo-repeats 1 --duration 2.5 --timeout 25 > $W/mx.log 2>&1
echo "mx rc=$?"
grep -E "tiny" $W/mx/sharing.md | head -40
rm -f $W/mx/rgpud-*.log
(cd /tmp && tar czf $OUT/c5.tar.gz c5)
