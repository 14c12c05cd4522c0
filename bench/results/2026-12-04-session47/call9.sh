#!/usr/bin/env bash
# Session 47, call 9 (carry .carry-new: b9cd54d plus the gate and --lc-drain-ratio, with call 7's
# sharing.json as the native baseline): a latency-critical launch waits for its context's BE
# slices only if its kernel is at least twice as long as they are (--lc-drain-ratio=2) against
# as now (1); 50 and 370 us Poisson LCs beside tiny and membound under fair+shared.
set -u
timeout 150 bash bench/sharing_on_device.sh .carry-new $OUT/r --matrix \
  --scenarios mx_lc_poisson_50,mx_lc_poisson_370,mx_poisson_50_tiny,mx_poisson_50_membound,mx_poisson_370_tiny,mx_poisson_370_membound \
  --modes fair+shared,fair+shared/--lc-drain-ratio=2 \
  --baseline .carry-new/native-sharing.json --duration 4 --timeout 20 > $OUT/r.log 2>&1
echo "rc=$?"
sed -n '/^## Matrix (LC/,/^Each figure/p' $OUT/r/sharing.md | grep "^| \`"
rm -f $OUT/r/device-log.txt $OUT/r/progress.txt $OUT/r/rgpud-logs.tar.gz
