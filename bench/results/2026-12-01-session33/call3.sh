#!/usr/bin/env bash
# Session 33, call 3 (carry .carry-new: a twin flushed only after launches on it). fair+shared
# against fair+shared/--twin-queues=0 (no twins), alternating, two passes each: the `tiny` BE
# tenant alone and beside the 370 us LCs; `brief` alone; native solo once. 2.5 s runs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c3 && rm -rf $W && mkdir -p $W
timeout 560 bash bench/sharing_on_device.sh .carry-new $W/mx --matrix \
  --modes native,fair+shared,fair+shared/--twin-queues=0,fair+shared/--twin-queues=1,fair+shared/--twin-queues=0/--pipe-loops=1,fair \
  --scenarios mx_lc_poisson_370,mx_lc_periodic_370,mx_lc_pareto_370,mx_be_tiny,mx_be_brief,mx_poisson_370_tiny,mx_periodic_370_tiny,mx_pareto_370_tiny \
  --solo-repeats 1 --duration 2.5 --timeout 25 > $W/mx.log 2>&1
echo "mx rc=$?"
grep -E '^\| `mx_' $W/mx/sharing.md | head -24
mkdir -p /tmp/lg && tar -xzf $W/mx/rgpud-logs.tar.gz -C /tmp/lg 2>/dev/null
for f in /tmp/lg/*; do echo "$f"; grep -h "session.*end" $f | grep -o "[0-9]* launches through its launch thread[^)]*)" | head -12 | tr '\n' ';'; echo; done
rm -rf /tmp/lg
(cd /tmp && tar czf $OUT/c3.tar.gz c3)
