#!/usr/bin/env bash
# Session 22, call 7 (carry .carry-new = 73a7305): 2 LC + 2 BE and the Poisson LC alone,
# native, fair and fair+shared each with and without --chain-held, 3 s runs, two rounds.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for r in a b; do
  timeout 250 bash bench/sharing_on_device.sh .carry-new $OUT/mx-$r --matrix \
    --scenarios mx_lc_poisson_370,mx_2lc2be_poisson_370 \
    --modes native,fair,fair/--chain-held=0,fair+shared,fair+shared/--chain-held=0 \
    --duration 3 --timeout 25 > /dev/null 2>&1
  echo "mx-$r rc=$?"
  grep -B2 -A6 'Matrix (LC p99' $OUT/mx-$r/sharing.md | grep '^|' | grep -v '^|---'
  grep '2lc2be' $OUT/mx-$r/sharing.md | grep -E '^\| (fair|native)' | cut -d'|' -f2,4,5,6,7,8,12
  rm -f $OUT/mx-$r/device-log.txt $OUT/mx-$r/progress.txt $OUT/mx-$r/rgpud-logs.tar.gz
done
