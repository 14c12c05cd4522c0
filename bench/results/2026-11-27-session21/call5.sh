#!/usr/bin/env bash
# Session 21, call 5 (carry .carry-new = the drain also waits for a slice being launched):
# the LC trace beside membound in the context group, with and without the spinning feed,
# then the same cells untraced.
set -u
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
S=mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_be_membound,mx_periodic_370_membound,mx_poisson_370_membound,mx_pareto_370_membound,mx_poisson_50_membound
RGPU_TRACE_REQUESTS=1 timeout 250 bash bench/sharing_on_device.sh .carry-new $OUT/tr --matrix \
  --scenarios $S --modes native,fair+shared,fair+shared/--spin-feed=0 --duration 3 --timeout 25 > /dev/null 2>&1
echo "tr rc=$?"
grep -B2 -A10 'Matrix (LC p99' $OUT/tr/sharing.md | grep '^|'
mkdir -p /tmp/logs && tar -xzf $OUT/tr/rgpud-logs.tar.gz -C /tmp/logs
find /tmp/logs -type f | sort | while read f; do
  if grep -q 'lc trace' $f; then echo "== $f"; grep 'lc trace' $f | sed 's/^.*rgpud: //'; fi
done
rm -f $OUT/tr/device-log.txt $OUT/tr/progress.txt
timeout 250 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --scenarios $S --modes native,fair+shared,fair+shared/--lc-drain-us=0 --duration 3 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -B2 -A10 'Matrix (LC p99' $OUT/mx/sharing.md | grep '^|'
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
