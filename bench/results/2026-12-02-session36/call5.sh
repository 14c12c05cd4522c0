#!/usr/bin/env bash
# Session 36, call 5 (carry .carry-new as call 4): turns on and off side by side in one run.
# The LC cells that call 4 ran on a host that held threads back (Poisson 370 us LC beside
# short, membound, brief, tiny; 2 LC + 2 BE) under fair and fair+shared, each with and without
# best-effort turns, against session 35's native runs; then the tiny kind alone, 2 and 4 of it
# under fifo, fair and fair without turns, against call 1's native runs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 200 bash bench/sharing_on_device.sh .carry-new $OUT/lc --matrix \
  --modes fair,fair/--be-turns=0,fair+shared,fair+shared/--be-turns=0 \
  --baseline .carry-new/native-mx.json --duration 2.5 --timeout 25 \
  --scenarios mx_2lc2be_poisson_370,mx_poisson_370_short,mx_poisson_370_membound,mx_poisson_370_brief,mx_poisson_370_tiny > $OUT/lc.log 2>&1
echo "lc rc=$?"
grep -E "^\| \`mx_(2lc2be|poisson_370)" $OUT/lc/sharing.md
timeout 120 bash bench/sharing_on_device.sh .carry-new $OUT/tiny --matrix --equal --be-kinds tiny \
  --modes fifo,fair,fair/--be-turns=0 --baseline .carry-new/native-sharing.json \
  --duration 2.5 --timeout 25 > $OUT/tiny.log 2>&1
echo "tiny rc=$?"
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/tiny/sharing.md
rm -f $OUT/*/rgpud-logs.tar.gz $OUT/*/device-log.txt $OUT/*/progress.txt
