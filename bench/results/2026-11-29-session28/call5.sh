#!/usr/bin/env bash
# Session 28, call 5: held launches after this session's launch-path changes, new (.carry-new)
# against old (.carry-old, b700dc8), one invocation each: the 370 us LC (periodic, Poisson)
# beside `membound`, `brief` and `tiny`, modes native, fair+shared and fair, 3 s runs.
set -u
for d in bench lib icd; do [ -e .carry-old/$d ] || cp -r .carry-new/$d .carry-old/; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
S=mx_lc_periodic_370,mx_lc_poisson_370,mx_be_membound,mx_be_brief,mx_be_tiny,mx_periodic_370_membound,mx_periodic_370_brief,mx_poisson_370_membound,mx_poisson_370_brief,mx_poisson_370_tiny
for v in new old; do
  timeout 280 bash bench/sharing_on_device.sh .carry-$v $OUT/mx-$v --matrix --scenarios $S \
    --modes native,fair+shared,fair --duration 3 --timeout 25 > /dev/null 2>&1
  echo "mx-$v rc=$?"
  grep -A16 '^## Matrix (LC p99' $OUT/mx-$v/sharing.md | grep '^|'
  grep -A8 'solo runs' $OUT/mx-$v/sharing.md | grep '^|'
  rm -f $OUT/mx-$v/device-log.txt $OUT/mx-$v/progress.txt
done
cd $OUT && tar czf mx.tar.gz mx-new mx-old && rm -rf mx-new mx-old
