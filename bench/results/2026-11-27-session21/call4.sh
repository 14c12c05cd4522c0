#!/usr/bin/env bash
# Session 21, call 4 (carry .carry-new = call 3's build + the drain in the LC trace): where an
# LC request's time goes beside membound in the context group, with the LC trace
# (RGPU_TRACE_REQUESTS=1: every LC launch gets an event, so absolute figures are a little
# slower); fair+shared with and without the drain, and fair (separate contexts).
set -u
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
RGPU_TRACE_REQUESTS=1 timeout 400 bash bench/sharing_on_device.sh .carry-new $OUT/tr --matrix \
  --scenarios mx_lc_periodic_370,mx_lc_poisson_50,mx_be_membound,mx_periodic_370_membound,mx_poisson_50_membound,mx_pareto_370_membound \
  --modes native,fair+shared,fair+shared/--lc-drain-us=0,fair --duration 3 --timeout 25 > /dev/null 2>&1
echo "tr rc=$?"
grep -B2 -A10 'Matrix (LC p99' $OUT/tr/sharing.md | grep '^|'
mkdir -p /tmp/logs && tar -xzf $OUT/tr/rgpud-logs.tar.gz -C /tmp/logs
for f in $(ls /tmp/logs/* -d); do :; done
find /tmp/logs -type f | sort | while read f; do
  if grep -q 'lc trace' $f; then echo "== $f"; grep 'lc trace' $f | sed 's/^.*rgpud: //'; fi
done
rm -f $OUT/tr/device-log.txt $OUT/tr/progress.txt
