#!/usr/bin/env bash
# Session 35, call 3 (carry .carry-new): the profiling times NVIDIA's OpenCL gives a kernel
# that waited for a user event (rgpud's gates; a direct launch behind held work's marker),
# against one that waited for nothing or for another queue's kernel: rgpu-probe-driver
# --gated, twice.
set -u
N=$(cd .carry-new && pwd)
. bench/device_vendors.sh
V=$(device_vendors $OUT/env.txt)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for i in 1 2; do
  OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/bench/rgpu-probe-driver --platform NVIDIA --gated > $OUT/gated-$i.json 2>&1
  echo "gated $i rc=$?"
done
python3 - $OUT/gated-1.json $OUT/gated-2.json <<'PY'
import json, sys, statistics as st
for f in sys.argv[1:]:
    d = json.load(open(f))
    print(f, 'busy_iters', d['busy_iters'])
    for k, v in d['cases'].items():
        print(f"  {k:30s} end-start us p50 {st.median(r[4] for r in v)/1e3:9.1f} min {min(r[4] for r in v)/1e3:9.1f} max {max(r[4] for r in v)/1e3:9.1f}"
              f"  queued==0 {sum(r[0]==0 for r in v):2d}  submit-queued p50 {st.median(r[1] for r in v)/1e3:12.1f}  start-queued p50 {st.median(r[2] for r in v)/1e3:14.1f}  host p50 {st.median(r[5] for r in v):8.1f}")
PY
