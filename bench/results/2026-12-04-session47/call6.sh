#!/usr/bin/env bash
# Session 47, call 6 (carry .carry-new of 041f35c): call 5 found rgpud's driver enqueue of the
# 50 us LC kernel at 34 us p50 beside tiny (15 alone) under fair+shared. Is it the BE tenant's
# own enqueues into the same context? The LC trace for Poisson 50 + tiny and + membound under
# fair+shared, fair+shared without direct BE launches beside the LC, and fair (own contexts).
set -u
export RGPU_TRACE_REQUESTS=1
timeout 400 bash bench/sharing_on_device.sh .carry-new $OUT/tr --matrix \
  --scenarios mx_lc_poisson_50,mx_poisson_50_tiny,mx_poisson_50_membound \
  --modes fair+shared,fair+shared/--direct-beside-lc=0,fair --duration 4 --timeout 30 > $OUT/tr.log 2>&1
echo "rc=$?"
grep -E "mx_poisson_50|mx_lc_poisson_50" $OUT/tr/sharing.md | head -14
mkdir -p /tmp/l && tar xzf $OUT/tr/rgpud-logs.tar.gz -C /tmp/l && for f in /tmp/l/*.log; do echo "== $f"; grep -h "lc trace\|start: " $f | cut -c1-330; done
rm -f $OUT/tr/device-log.txt $OUT/tr/progress.txt
