#!/usr/bin/env bash
# Session 43, call 8 (carry as call 7): call 7's host held threads back in most `fair` runs;
# the four 370 µs `tiny` cells once more, `fair` and `fair+shared`, with and without
# --direct-beside-lc, in one pass.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 200 bash bench/sharing_on_device.sh .carry-new /tmp/dl-c --matrix \
  --scenarios mx_periodic_370_tiny,mx_poisson_370_tiny,mx_bursty_370_tiny,mx_pareto_370_tiny \
  --modes fair,fair/--direct-beside-lc=1,fair+shared,fair+shared/--direct-beside-lc=1 \
  --baseline .carry-new/native-matrix.json --duration 2.5 --timeout 25 > $OUT/dl-c.log 2>&1
echo "dl-c rc=$?"
sed -n '/## Matrix (LC/,/Each figure/p' /tmp/dl-c/sharing.md | grep -E "^\| (\`mx_|cell)"
cp /tmp/dl-c/sharing.json $OUT/dl-c.json
