#!/usr/bin/env bash
# Session 48, call 1 (carry .carry-new of 85b7f37): a verdict on --lc-drain-ratio (a
# latency-critical kernel waits for its context's BE slices only if measured at least R times
# their expected time). fair+shared with R = 1 (default), 2 and 4; Poisson and bursty 50 us
# LCs and Poisson 370 and 2000 us LCs beside tiny and membound; native beside in round 1;
# round 2 against round 1's native runs, the modes in reverse order. 3 s runs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
SC=mx_lc_poisson_50,mx_lc_bursty_50,mx_lc_poisson_370,mx_lc_poisson_2000,mx_be_tiny,mx_be_membound
SC=$SC,mx_poisson_50_tiny,mx_poisson_50_membound,mx_bursty_50_tiny,mx_bursty_50_membound
SC=$SC,mx_poisson_370_tiny,mx_poisson_370_membound,mx_poisson_2000_membound
timeout 330 bash bench/sharing_on_device.sh .carry-new $OUT/r1 --matrix --scenarios $SC \
  --modes native,fair+shared,fair+shared/--lc-drain-ratio=2,fair+shared/--lc-drain-ratio=4 \
  --duration 3 --timeout 20 > $OUT/r1.log 2>&1
echo "r1 rc=$?"
sed -n '/^## Matrix (LC/,/^Each figure/p' $OUT/r1/sharing.md | grep "^| \`"
timeout 240 bash bench/sharing_on_device.sh .carry-new $OUT/r2 --matrix --scenarios $SC \
  --modes fair+shared/--lc-drain-ratio=4,fair+shared/--lc-drain-ratio=2,fair+shared \
  --baseline $OUT/r1/sharing.json --duration 3 --timeout 20 > $OUT/r2.log 2>&1
echo "r2 rc=$?"
sed -n '/^## Matrix (LC/,/^Each figure/p' $OUT/r2/sharing.md | grep "^| \`"
rm -f $OUT/r*/device-log.txt $OUT/r*/progress.txt
