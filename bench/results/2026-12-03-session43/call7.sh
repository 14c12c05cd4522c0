#!/usr/bin/env bash
# Session 43, call 7 (carry .carry-new of this session's build with `rgpud --direct-beside-lc`,
# off by default; plus session 42's call 3 mx/sharing.json as .carry-new/native-matrix.json):
# the matrix's `tiny` cells (30 µs launches of one wave, the one BE kind short enough to go
# direct beside an LC tenant) under `fair` and `fair+shared`, with and without the option,
# two rounds.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for r in a b; do
  timeout 280 bash bench/sharing_on_device.sh .carry-new /tmp/dl-$r --matrix \
    --scenarios mx_periodic_370_tiny,mx_poisson_370_tiny,mx_bursty_370_tiny,mx_pareto_370_tiny,mx_poisson_50_tiny,mx_poisson_2000_tiny \
    --modes fair,fair/--direct-beside-lc=1,fair+shared,fair+shared/--direct-beside-lc=1 \
    --baseline .carry-new/native-matrix.json --duration 2.5 --timeout 25 > $OUT/dl-$r.log 2>&1
  echo "dl-$r rc=$?"
  sed -n '/## Matrix (LC/,/Each figure/p' /tmp/dl-$r/sharing.md | grep -E "^\| (\`mx_|cell)"
  cp /tmp/dl-$r/sharing.json $OUT/dl-$r.json
  tar -xzOf /tmp/dl-$r/rgpud-logs.tar.gz 2>/dev/null | grep -oE "tenant [a-z0-9]+ scheduling \(fair\): [0-9]+ launches.* [0-9]+ held" | head -24 > $OUT/dl-$r-usage.txt
done
