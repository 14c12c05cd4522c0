#!/usr/bin/env bash
# Session 32, call 8 (carry .carry-new: call 6 with LcElsewhere: beside an LC tenant active in another context, held launches go at once from the session thread as before). Closed loops
# of launches through the session's launch thread (--pipe-loops, default on) against the same
# build with --pipe-loops=0 (as 840d1de): the `tiny` BE tenant alone and beside the LC
# arrival processes, under fair+shared and fair; on and off alternate (two passes each under
# fair+shared); native solo runs once. 2.5 s runs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c8 && rm -rf $W && mkdir -p $W
timeout 560 bash bench/sharing_on_device.sh .carry-new $W/mx --matrix \
  --modes native,fair+shared,fair+shared/--pipe-loops=0,fair+shared/--pipe-loops=1,fair+shared/--pipe-loops=0/--twin-queues=1,fair,fair/--pipe-loops=0 \
  --scenarios mx_lc_poisson_370,mx_lc_periodic_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_be_tiny,mx_poisson_370_tiny,mx_periodic_370_tiny,mx_pareto_370_tiny,mx_poisson_50_tiny,mx_bursty_370_tiny \
  --solo-repeats 1 --duration 2.5 --timeout 25 > $W/mx.log 2>&1
echo "mx rc=$?"
grep -E '^\| `mx_' $W/mx/sharing.md | head -40
mkdir -p /tmp/lg && tar -xzf $W/mx/rgpud-logs.tar.gz -C /tmp/lg 2>/dev/null
for f in /tmp/lg/*; do echo "$f"; grep -h "tenant be scheduling" $f | grep -o "[0-9]* at once, [0-9]* of them[^)]*" | head -12 | tr '\n' ';'; echo; done
rm -rf /tmp/lg
(cd /tmp && tar czf $OUT/c8.tar.gz c8)
