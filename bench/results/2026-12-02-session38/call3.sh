#!/usr/bin/env bash
# Session 38, call 3 (carry as call 1): loops two deep, `tiny`, fifo / fair / fair:32000, with
# rgpud's per-tenant scheduling lines (launches, held, gated, at once) kept for the 2 and 4
# tenant runs: how many launches of a turn go held.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 300 bash bench/sharing_on_device.sh .carry-new $OUT/d2 --matrix --equal --be-depth 2 \
  --be-kinds tiny --modes fifo,fair,fair:32000 \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/d2.log 2>&1
echo "d2 rc=$?"
sed -n '/## Matrix equal/,/## Accounting/p' $OUT/d2/sharing.md | grep -E "^\||^- "
mkdir -p $OUT/logs && tar -C $OUT/logs -xzf $OUT/d2/rgpud-logs.tar.gz
ls $OUT/logs
for f in $OUT/logs/*; do echo "== $(basename $f)"; grep -E "launches, .* slices" $f | sed 's/^.*tenant/tenant/' | cut -c1-400; done
rm -rf $OUT/logs $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*/rgpud-logs.tar.gz $OUT/*.log
