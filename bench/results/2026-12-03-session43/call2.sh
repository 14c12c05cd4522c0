#!/usr/bin/env bash
# Session 43, call 2 (carry .carry-new of 9de5991: a launch chained behind a held one on the
# device now waits through SettleQueue, the queue's Finish, before it parks; plus call 1's two
# JSON files): (a) equal `tiny` tenants two deep, `fifo` and `fair`, with the parking counts
# from rgpud's logs; (b) the LC alone (periodic and bursty 370 µs, Poisson 50 µs) under
# `fifo`, `fair` and `fair+shared`, twice, against call 3 of session 42's native runs: what
# rgpud adds to a request when nothing else runs (issue 12's outcome 1 inside issue 15's cells).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 150 bash bench/sharing_on_device.sh .carry-new /tmp/eq --matrix --equal --be-depth 2 \
  --be-kinds tiny --modes fifo,fair --baseline .carry-new/native-sharing.json \
  --duration 2.5 --timeout 25 > $OUT/eq.log 2>&1
echo "eq rc=$?"
sed -n '/## Matrix equal/,/## Accounting/p' /tmp/eq/sharing.md | grep -E "^\| (tiny|BE kind)"
tar -xzOf /tmp/eq/rgpud-logs.tar.gz 2>/dev/null | grep -oE '[0-9]+ gated \(.*user events made' | head -12 | tee $OUT/eq-usage.txt
for r in a b; do
  timeout 150 bash bench/sharing_on_device.sh .carry-new /tmp/lc-$r --matrix \
    --scenarios mx_lc_periodic_370,mx_lc_bursty_370,mx_lc_poisson_50 \
    --modes fifo,fair,fair+shared --baseline .carry-new/native-matrix.json \
    --duration 2.5 --timeout 25 > $OUT/lc-$r.log 2>&1
  echo "lc-$r rc=$?"
  grep -E '^\| `mx_lc' /tmp/lc-$r/sharing.md | head -3
done
cp /tmp/eq/sharing.md $OUT/eq.md
cp /tmp/lc-a/sharing.json $OUT/lc-a.json
cp /tmp/lc-b/sharing.json $OUT/lc-b.json
