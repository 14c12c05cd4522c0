#!/usr/bin/env bash
# Session 34, call 3 (carry .carry-new, 033bee8). Does a context group cost an LC tenant alone
# time per request? LC alone (periodic, bursty, Poisson 370 us; Poisson 50 us) under
# fair+shared, fair, fifo+shared, fifo, then each again (a default flag makes the second pass
# a mode of its own name), native once. 2.5 s runs, no traces.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c3 && rm -rf $W && mkdir -p $W
timeout 560 bash bench/sharing_on_device.sh .carry-new $W/mx --matrix \
  --modes native,fair+shared,fair,fifo+shared,fifo,fair+shared/--lc-guard-us=50,fair/--lc-guard-us=50,fifo+shared/--lc-guard-us=50,fifo/--lc-guard-us=50 \
  --scenarios mx_lc_periodic_370,mx_lc_bursty_370,mx_lc_poisson_370,mx_lc_poisson_50 \
  --solo-repeats 1 --duration 2.5 --timeout 25 > $W/mx.log 2>&1
echo "mx rc=$?"
grep -E '^\| `mx_' $W/mx/sharing.md | head -8
grep -E "^\| [a-z+/=0-9-]* \| mx_" $W/mx/sharing.md | cut -d'|' -f2,3,7-11
(cd /tmp && tar czf $OUT/c3.tar.gz c3)
