#!/usr/bin/env bash
# Session 22, call 6 (carry .carry-new = 73a7305): the whole matrix, native, fair and
# fair+shared, each also with --chain-held=0, 2 s runs: the generated tables of
# docs/scheduling.md (bench/report.py --bench sharing --region matrix .../call6/mx).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 580 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --modes native,fair,fair/--chain-held=0,fair+shared,fair+shared/--chain-held=0 \
  --duration 2 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -B2 -A40 'Matrix (LC p99' $OUT/mx/sharing.md | grep '^|' | grep -v '^|---'
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
