#!/usr/bin/env bash
# Session 37, call 5 (carry .carry-new of 94ac509: the turn's wait from the expected end of its direct launches; direct launches in a turn up to a slice, once the
# tenant's held launches have ended on the device; call 1's sharing.json as native-sharing.json,
# session 35 call 6's LC matrix as native-lc.json): equal tenants one and two deep for the
# kinds whose launches fit a slice; then LC cells with two BE tenants or short BE launches.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for d in 1 2; do
  timeout 200 bash bench/sharing_on_device.sh .carry-new $OUT/d$d --matrix --equal --be-depth $d \
    --be-kinds membound,tiny,brief --modes fifo,fair,fair+shared \
    --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/d$d.log 2>&1
  echo "d$d rc=$?"
  sed -n '/## Matrix equal/,/## Accounting/p' $OUT/d$d/sharing.md
done
timeout 120 bash bench/sharing_on_device.sh .carry-new $OUT/lc --matrix \
  --scenarios mx_poisson_370_membound,mx_poisson_370_tiny,mx_2lc2be_poisson_370 --modes fair,fair+shared \
  --baseline .carry-new/native-lc.json --duration 2.5 --timeout 25 > $OUT/lc.log 2>&1
echo "lc rc=$?"
sed -n '/^| cell/,/^Each figure/p' $OUT/lc/sharing.md | head -12
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*/rgpud-logs.tar.gz
