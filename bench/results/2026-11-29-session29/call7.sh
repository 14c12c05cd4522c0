#!/usr/bin/env bash
# Session 29, call 7 (carry .carry-new = 6a885fd's build): docs/performance.md's "Latest
# results" command and the driver probe, for the docs' generated tables; then a part of the
# sharing matrix with its native solo runs repeated (--solo-repeats 3, new): the Poisson and
# periodic 370 us LC beside membound and tiny, native, fair+shared and fair.
set -u
N=.carry-new
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
timeout 230 bash bench/sharing_on_device.sh $N $OUT/mx --matrix --modes native,fair+shared,fair \
  --scenarios mx_lc_poisson_370,mx_lc_periodic_370,mx_be_membound,mx_be_tiny,mx_poisson_370_membound,mx_poisson_370_tiny,mx_periodic_370_membound \
  --solo-repeats 3 --duration 3 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -A12 '^## Matrix (' $OUT/mx/sharing.md | grep '^|'
grep -A12 'repeated' $OUT/mx/sharing.md | grep '^|'
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt
cd $OUT && tar czf res.tar.gz ovh ovh.log mx && rm -rf ovh mx
