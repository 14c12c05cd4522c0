#!/usr/bin/env bash
# Session 35, call 2 (carry .carry-new): with a launch behind its tenant's held work no longer
# taken as its kernel's cost, each BE kind alone right after an LC solo run under fair+shared
# (where call 1 had `short` at 0.64), rgpud at debug, against session 34's call 4 native runs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 300 bash bench/sharing_on_device.sh .carry-new $OUT/acc --matrix \
  --modes fair+shared --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 \
  --scenarios mx_lc_periodic_370,mx_be_short,mx_lc_poisson_370,mx_be_membound,mx_lc_bursty_370,mx_be_long,mx_lc_pareto_370,mx_be_opaque,mx_lc_periodic_370,mx_be_brief,mx_lc_poisson_370,mx_be_tiny,mx_lc_poisson_50,mx_be_short \
  --rgpud-log-level debug > $OUT/acc.log 2>&1
echo "acc rc=$?"
python3 - "$OUT/acc/sharing.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d['runs']:
    if r['mode'] == 'native': continue
    print(r['mode'], r['scenario'], [(t['tenant'], round(t['accounting']['ratio'], 3), t.get('kernels'))
                                     for t in r['tenants'] if 'accounting' in t])
PY
