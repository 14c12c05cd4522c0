#!/usr/bin/env bash
# Session 17, call 6 (device tool, carry .carry-new .carry-head): the committed build ccec5e0
# (new) against HEAD 2c85128's rgpud and ICD (old): create_probe, then the bandwidth task
# alternating old/new twice, then the whole "Latest results" command with the new build.
set -u
N=.carry-new
O=/tmp/c-old
cp -r .carry-new $O && cp .carry-head/server/rgpud $O/server/ && cp .carry-head/client/librgpu-icd.so $O/client/
echo 2c85128 > $O/COMMIT
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
P=$N/bench/create_probe
mkdir -p $OUT/ab
(
export LD_LIBRARY_PATH=$PWD/$N/lib
for kib in 256 1024 4096; do echo -n "native "; OCL_ICD_VENDORS=$V $P NVIDIA $kib; done
for b in old new; do
  d=$N; [ $b = old ] && d=$O
  $d/server/rgpud --listen unix:/tmp/r-$b.sock --log-level warn > /tmp/r-$b-u.log 2>&1 & pu=$!
  $d/server/rgpud --listen 127.0.0.1:7461 --log-level warn > /tmp/r-$b-t.log 2>&1 & pt=$!
  sleep 1.5
  mkdir -p /tmp/icd-$b && echo "$(cd $d && pwd)/client/librgpu-icd.so" > /tmp/icd-$b/rgpu.icd
  for kib in 256 1024 4096; do
    echo -n "$b unix "; OCL_ICD_VENDORS=/tmp/icd-$b RGPU_SERVER=unix:/tmp/r-$b.sock $P rgpu $kib
    echo -n "$b tcp  "; OCL_ICD_VENDORS=/tmp/icd-$b RGPU_SERVER=127.0.0.1:7461 $P rgpu $kib
  done
  kill $pu $pt; wait $pu $pt 2>/dev/null
done
) 2>&1 | tee $OUT/create_probe.txt
for r in 1 2; do
  for b in old new; do
    c=$N; [ $b = old ] && c=$O
    timeout 120 bash bench/on_device.sh $c $OUT/ab/$b$r --tasks bandwidth --no-links --max-bytes 256M \
      --bandwidth-rounds 1 > /dev/null 2>&1
    echo "$b$r rc=$?"
  done
done
timeout 400 bash bench/on_device.sh $N $OUT/ovh --iterations 5000 --async-launches 100000 \
  --max-bytes 256M --matmul-budget 1 --link-delay-ms 0.5,5,25 --worker-timeout 150 \
  --request-us 10,50,370,2000,10000 > /dev/null 2>&1
echo "ovh rc=$?"
OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/bench/rgpu-probe-driver --platform NVIDIA > $OUT/ovh/probe-nvidia.json 2>&1
cd $OUT && tar czf ab.tar.gz ab && tar czf ovh.tar.gz ovh && rm -rf ab ovh
