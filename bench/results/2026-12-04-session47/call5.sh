#!/usr/bin/env bash
# Session 47, call 5 (carry .carry-new of 041f35c): where a 50 us LC request's time goes beside
# short BE launches under fair+shared. rgpud's LC trace (RGPU_TRACE_REQUESTS=1: host stages and
# the LC kernels' device timeline, in each rgpud log) for the Poisson 50 us LC alone and beside
# tiny, membound and brief; native beside.
set -u
export RGPU_TRACE_REQUESTS=1
timeout 400 bash bench/sharing_on_device.sh .carry-new $OUT/tr --matrix \
  --scenarios mx_lc_poisson_50,mx_poisson_50_tiny,mx_poisson_50_membound,mx_poisson_50_brief \
  --modes native,fair+shared --duration 4 --timeout 30 > $OUT/tr.log 2>&1
echo "rc=$?"
grep -E "mx_poisson_50|mx_lc_poisson_50" $OUT/tr/sharing.md | head -12
mkdir -p /tmp/l && tar xzf $OUT/tr/rgpud-logs.tar.gz -C /tmp/l && grep -h "lc trace\|start: \|rgpud: listening" /tmp/l/*.log | cut -c1-400
rm -f $OUT/tr/device-log.txt $OUT/tr/progress.txt
