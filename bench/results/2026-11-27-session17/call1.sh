#!/usr/bin/env bash
# Session 17, call 1 (device tool, kind nvidia-h200, carry .carry-new .carry-old):
# A/B of socket reads (old = 9df1ae6, the hand-over fix alone; new = HEAD, plus the staging
# window and the piece chain), then the whole "Latest results" command with HEAD.
set -u
N=.carry-new
O=/tmp/c-old
cp -r .carry-new $O && cp .carry-old/server/rgpud $O/server/ && cp .carry-old/client/librgpu-icd.so $O/client/
echo 9df1ae6 > $O/COMMIT
mkdir -p $OUT/ab
for r in 1 2; do
  for b in old new; do
    c=$N; [ $b = old ] && c=$O
    timeout 120 bash bench/on_device.sh $c $OUT/ab/$b$r --tasks bandwidth --no-links --max-bytes 256M \
      --bandwidth-rounds 1 --rgpud-arg=--log-level=debug > /dev/null 2>&1
    echo "$b$r rc=$?"
  done
done
timeout 420 bash bench/on_device.sh $N $OUT/ovh --iterations 5000 --async-launches 100000 \
  --max-bytes 256M --matmul-budget 1 --link-delay-ms 0.5,5,25 --worker-timeout 150 \
  --request-us 10,50,370,2000,10000 > /dev/null 2>&1
echo "ovh rc=$?"
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/bench/rgpu-probe-driver --platform NVIDIA > $OUT/ovh/probe-nvidia.json 2>&1
cd $OUT && tar czf ab.tar.gz ab && tar czf ovh.tar.gz ovh && rm -rf ab ovh
