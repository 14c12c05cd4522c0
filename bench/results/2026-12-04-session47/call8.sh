#!/usr/bin/env bash
# Session 47, call 8 (carry as call 7, plus call 7's sharing.json as .carry-new/native-sharing.json
# for the native baseline): call 7's gate runs of the 50 us cells were held back by the host.
# The 50 us cells and 370 + membound again, fair+shared / gate / --lc-drain-us=0, twice.
set -u
for i in 1 2; do
  timeout 200 bash bench/sharing_on_device.sh .carry-new $OUT/r$i --matrix \
    --scenarios mx_lc_poisson_50,mx_poisson_50_tiny,mx_poisson_50_membound,mx_poisson_370_membound \
    --modes fair+shared,fair+shared/--lc-enqueue-first-us=200,fair+shared/--lc-drain-us=0 \
    --baseline .carry-new/native-sharing.json --duration 4 --timeout 30 > $OUT/r$i.log 2>&1
  echo "r$i rc=$?"
  sed -n '/^## Matrix (LC/,/^Each figure/p' $OUT/r$i/sharing.md | grep "^| \`"
  rm -f $OUT/r$i/device-log.txt $OUT/r$i/progress.txt $OUT/r$i/rgpud-logs.tar.gz
done
