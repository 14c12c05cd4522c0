#!/usr/bin/env bash
# Session 28, call 4 (carry .carry-new = this session's build): the documented "Latest results"
# command of docs/performance.md and the driver probe (as session 25's call5.sh), for the docs;
# then `tiny` alone and beside the Poisson 370 us LC under fair, old (.carry-old, b700dc8) and
# new alternating, two more runs each (call 2 had one).
set -u
N=.carry-new
for d in bench lib icd; do [ -e .carry-old/$d ] || cp -r .carry-new/$d .carry-old/; done
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
cat $OUT/gpu.txt
timeout 330 bash bench/on_device.sh $N $OUT/ovh --iterations 5000 --async-launches 100000 \
  --max-bytes 256M --matmul-budget 1 --link-delay-ms 0.5,5,25 --worker-timeout 150 \
  --request-us 10,50,370,2000,10000 > $OUT/ovh.log 2>&1
echo "ovh rc=$?"
OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/bench/rgpu-probe-driver --platform NVIDIA > $OUT/ovh/probe-nvidia.json 2>&1
grep -A40 '## Targets' $OUT/ovh/overhead.md | grep '^|'
grep -A6 '## Asynchronous' $OUT/ovh/overhead.md | grep '^|'
for r in 1 2; do
  for v in old new; do
    d=$OUT/tiny-$v-$r
    timeout 120 bash bench/sharing_on_device.sh .carry-$v $d --matrix \
      --scenarios mx_be_tiny,mx_lc_poisson_370,mx_poisson_370_tiny --modes native,fair --duration 3 --timeout 25 > /dev/null 2>&1
    echo "tiny-$v-$r rc=$?"; grep -A4 'solo runs' $d/sharing.md | grep 'mx_be_tiny'
    grep 'mx_poisson_370_tiny' $d/sharing.md | head -2
    rm -f $d/device-log.txt $d/progress.txt
  done
done
cd $OUT && tar czf res.tar.gz ovh ovh.log tiny-* && rm -rf ovh tiny-*
