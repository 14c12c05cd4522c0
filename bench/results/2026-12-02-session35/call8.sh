#!/usr/bin/env bash
# Session 35, call 8 (carry .carry-new): the accounting of tenants alone against the kernels
# as their tenants launch them (LC after an idle gap, short BE kernels back to back): native
# and fair+shared, the tiny and brief BE kinds and the 50 and 370 us Poisson LCs, a fresh
# calibration.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 200 bash bench/sharing_on_device.sh .carry-new $OUT/acc --matrix \
  --modes native,fair+shared --solo-repeats 1 --duration 2.5 --timeout 25 \
  --scenarios mx_be_tiny,mx_be_brief,mx_lc_poisson_50,mx_lc_poisson_370 > $OUT/acc.log 2>&1
echo "acc rc=$?"
grep -E "groups x" $OUT/acc.log | head
python3 - "$OUT/acc/sharing.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d['runs']:
    if r['mode'] == 'native': continue
    print(r['mode'], r['scenario'], [(t['tenant'], t['kernel_device_ms'], round(t['accounting']['ratio'], 3))
                                     for t in r['tenants'] if 'accounting' in t])
PY
rm -f $OUT/acc/rgpud-logs.tar.gz $OUT/acc/device-log.txt
