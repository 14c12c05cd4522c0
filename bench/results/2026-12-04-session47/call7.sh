#!/usr/bin/env bash
# Session 47, call 7 (carry .carry-new of b9cd54d plus --lc-enqueue-first-us, the LcEnqueueGate):
# calls 5-6 found the 50 us LC kernel's driver enqueue slower in a shared context beside BE
# launches (34 / 87 us p50 / p99 against 15-22 / 50-55 alone). The gate (BE launches decided
# before an LC frame wait, up to 200 us, while it is served) and --lc-drain-us=0 (no wait for
# BE slices before the LC launch), against fair+shared as it is, beside native; Poisson 50 and
# 370 us LCs with tiny, membound, brief; LC trace on; 4 s runs.
set -u
export RGPU_TRACE_REQUESTS=1
timeout 500 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --scenarios mx_lc_poisson_50,mx_lc_poisson_370,mx_be_tiny,mx_be_membound,mx_be_brief,mx_poisson_50_tiny,mx_poisson_50_membound,mx_poisson_50_brief,mx_poisson_370_tiny,mx_poisson_370_membound \
  --modes native,fair+shared,fair+shared/--lc-enqueue-first-us=200,fair+shared/--lc-drain-us=0 \
  --solo-repeats 2 --duration 4 --timeout 30 > $OUT/mx.log 2>&1
echo "mx rc=$?"
sed -n '/^## Matrix (LC/,/^## Matrix solo/p' $OUT/mx/sharing.md | head -24
mkdir -p /tmp/l && tar xzf $OUT/mx/rgpud-logs.tar.gz -C /tmp/l && for f in /tmp/l/*.log; do echo "== $f"; grep -h "lc trace.*host" $f | sed 's/.*host us p50\/p90\/p99\/max: //'; done
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
