#!/usr/bin/env bash
# Session 34, call 1 (carry .carry-new, 033bee8). Why a bursty LC alone reads 1.4-1.7x native
# p99 through rgpud: the LC tenants alone (bursty, Poisson, periodic 370 us; Poisson 50 us)
# and bursty 370 + brief, under native, fair+shared, fair, fifo, and fair+shared without the
# launch thread / without socket polling; RGPU_TRACE_REQUESTS=1 (rgpud logs where each
# session's requests spent their time). 2.5 s runs, native solo once.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c1 && rm -rf $W && mkdir -p $W
export RGPU_TRACE_REQUESTS=1
timeout 500 bash bench/sharing_on_device.sh .carry-new $W/mx --matrix \
  --modes native,fair+shared,fair,fifo,fair+shared/--launch-thread=0,fair+shared/--lc-poll-us=0 \
  --scenarios mx_lc_bursty_370,mx_lc_poisson_370,mx_lc_periodic_370,mx_lc_poisson_50,mx_bursty_370_brief \
  --solo-repeats 1 --duration 2.5 --timeout 25 > $W/mx.log 2>&1
echo "mx rc=$?"
grep -E '^\| `mx_' $W/mx/sharing.md | head -12
mkdir -p $W/lg && tar -xzf $W/mx/rgpud-logs.tar.gz -C $W/lg 2>/dev/null
for f in $W/lg/*; do echo "== $f"; grep -h "request trace\|LC trace\|lc trace" $f | cut -c1-400 | head -20; done
(cd /tmp && tar czf $OUT/c1.tar.gz c1)
