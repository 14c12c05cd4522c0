#!/usr/bin/env bash
# Session 46's call 1, run in session 47 as its call 1 (carry .carry-new of 041f35c, which
# has --lc-ahead-of-kernel): the Poisson 50 us LC cells and one 370 us control cell, each
# policy with the bound off (the default) and on, beside native, in one run; 5 s per run,
# native solo shapes twice. Results in call1/.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 560 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --scenarios mx_lc_poisson_50,mx_lc_poisson_370,mx_be_tiny,mx_be_membound,mx_be_brief,mx_be_short,mx_poisson_50_tiny,mx_poisson_50_membound,mx_poisson_50_brief,mx_poisson_50_short,mx_poisson_370_tiny \
  --modes native,fair+shared,fair+shared/--lc-ahead-of-kernel=1,fair,fair/--lc-ahead-of-kernel=1 \
  --solo-repeats 2 --duration 5 --timeout 30 > $OUT/mx.log 2>&1
echo "mx rc=$?"
tail -3 $OUT/mx.log
grep -E "meet both" $OUT/mx/sharing.md | head
rm -f $OUT/mx/device-log.txt $OUT/mx/rgpud-logs.tar.gz $OUT/mx/progress.txt
