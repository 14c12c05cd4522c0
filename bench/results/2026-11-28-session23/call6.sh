#!/usr/bin/env bash
# Session 23, call 6 (carry .carry-new = ee596fb): the LC tenant alone, bursty and periodic
# 370 us, native, fair and fair+shared, with rgpud's request traces (RGPU_TRACE_REQUESTS=1):
# alone, a bursty LC tenant read 0.447-0.495 ms at p50 under fair against 0.402-0.415 under
# fair+shared and 0.391-0.401 natively (calls 4 and 5). Where does fair add its time?
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
RGPU_TRACE_REQUESTS=1 timeout 300 bash bench/sharing_on_device.sh .carry-new $OUT/t --matrix \
  --scenarios mx_lc_bursty_370,mx_lc_periodic_370,mx_lc_poisson_370 \
  --modes native,fair,fair+shared,fair/--lc-guard-us=50 --duration 3 --timeout 25 > /dev/null 2>&1
echo "t rc=$?"
grep -A6 'solo runs' $OUT/t/sharing.md | grep '^|' | grep -v '^|---'
mkdir -p $OUT/logs && tar -xzf $OUT/t/rgpud-logs.tar.gz -C $OUT/logs
for f in $OUT/logs/*.log; do echo "== $(basename $f)"; grep -E 'request trace|lc trace' $f | cut -c1-700; done
rm -rf $OUT/logs $OUT/t/device-log.txt $OUT/t/progress.txt $OUT/t/sharing.json
