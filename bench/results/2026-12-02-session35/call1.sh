#!/usr/bin/env bash
# Session 35, call 1 (carry .carry-new): why the `short` BE alone is under-charged (0.62) under
# fair+shared right after LC solo runs. fair+shared and fair, rgpud at debug (each session's
# end logs its tenant's usage so far, each launch cost's first measurement), against session
# 34's call 4 native runs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 300 bash bench/sharing_on_device.sh .carry-new $OUT/acc --matrix \
  --modes fair+shared,fair --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 \
  --scenarios mx_lc_periodic_370,mx_lc_poisson_370,mx_be_short,mx_be_short,mx_be_membound,mx_lc_bursty_370,mx_be_opaque,mx_be_short \
  --rgpud-log-level debug > $OUT/acc.log 2>&1
echo "acc rc=$?"
tail -3 $OUT/acc.log
python3 - "$OUT/acc/sharing.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d['runs']:
    if r['mode'] == 'native': continue
    print(r['mode'], r['scenario'], [(t['tenant'], round(t['accounting']['ratio'], 3), t.get('kernels'))
                                     for t in r['tenants'] if 'accounting' in t])
PY
