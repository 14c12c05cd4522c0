#!/usr/bin/env bash
# Session 36, call 4 (carry .carry-new; call 1's sharing.json as native-sharing.json, session
# 35's call 6 matrix as native-mx.json): the build with best-effort turns and the 100 us wait
# as defaults. Equal tenants under fifo, fair and fair+shared against call 1's native runs;
# then the LC cells with two BE tenants (2lc2be) and one BE tenant (Poisson 370 us beside
# short, membound, brief, tiny) under fair and fair+shared against session 35's native runs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 330 bash bench/sharing_on_device.sh .carry-new $OUT/eq --matrix --equal \
  --modes fifo,fair,fair+shared --baseline .carry-new/native-sharing.json \
  --duration 2.5 --timeout 25 > $OUT/eq.log 2>&1
echo "eq rc=$?"
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/eq/sharing.md
timeout 150 bash bench/sharing_on_device.sh .carry-new $OUT/lc --matrix \
  --modes fair,fair+shared --baseline .carry-new/native-mx.json --duration 2.5 --timeout 25 \
  --scenarios mx_2lc2be_poisson_370,mx_poisson_370_short,mx_poisson_370_membound,mx_poisson_370_brief,mx_poisson_370_tiny > $OUT/lc.log 2>&1
echo "lc rc=$?"
grep -E "^\| \`mx_(2lc2be|poisson_370)" $OUT/lc/sharing.md
rm -f $OUT/eq/rgpud-logs.tar.gz $OUT/eq/device-log.txt $OUT/lc/rgpud-logs.tar.gz $OUT/lc/device-log.txt $OUT/eq/progress.txt $OUT/lc/progress.txt
