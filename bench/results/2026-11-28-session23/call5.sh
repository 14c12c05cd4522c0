#!/usr/bin/env bash
# Session 23, call 5 (carry .carry-new = ee596fb): the guard after an LC request
# (--lc-guard-us, default 50) at 150 and 400 us, bursty and Poisson 370 us LC beside `brief`
# and `membound`, fair and fair+shared, 2 s runs. In a burst the LC tenant's next request is
# due 0.4 ms after the last and is issued as soon as the last one's read returns; if it
# reaches rgpud later than the guard, a BE launch has gone on the device and the request
# waits for it.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 500 bash bench/sharing_on_device.sh .carry-new $OUT/g --matrix \
  --scenarios mx_lc_bursty_370,mx_lc_poisson_370,mx_be_brief,mx_be_membound,mx_bursty_370_brief,mx_bursty_370_membound,mx_poisson_370_brief,mx_poisson_370_membound \
  --modes native,fair,fair/--lc-guard-us=150,fair/--lc-guard-us=400,fair+shared,fair+shared/--lc-guard-us=150 \
  --duration 2 --timeout 25 > /dev/null 2>&1
echo "g rc=$?"
grep -B2 -A12 'Matrix (LC p99' $OUT/g/sharing.md | grep '^|' | grep -v '^|---'
grep -A10 'solo runs' $OUT/g/sharing.md | grep '^|' | grep -v '^|---'
rm -f $OUT/g/device-log.txt $OUT/g/progress.txt $OUT/g/rgpud-logs.tar.gz $OUT/g/sharing.json
