#!/usr/bin/env bash
# Session 17, call 5 (device tool, carry .carry-new .carry-head): rgpud with glibc's mmap
# threshold at 32 MiB and automatic trimming off (the heap trimmer trims after sessions end
# and when idle pooled buffers are freed) against HEAD 2c85128 (threshold fixed at 128 KiB):
# create_probe (Unix socket and TCP, native beside), then the benchmark's matmul task, old
# and new alternating twice.
set -u
N=.carry-new
O=/tmp/c-old
cp -r .carry-new $O && cp .carry-head/server/rgpud $O/server/ && cp .carry-head/client/librgpu-icd.so $O/client/
export LD_LIBRARY_PATH=$PWD/$N/lib
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
P=$N/bench/create_probe
mkdir -p $OUT/mm
for r in 1 2; do
  for kib in 1024 4096; do echo -n "native "; OCL_ICD_VENDORS=$V $P NVIDIA $kib; done
  for b in old new; do
    d=$N; [ $b = old ] && d=$O
    $d/server/rgpud --listen unix:/tmp/r-$b.sock --log-level warn > /tmp/r-$b-u.log 2>&1 & pu=$!
    $d/server/rgpud --listen 127.0.0.1:7461 --log-level warn > /tmp/r-$b-t.log 2>&1 & pt=$!
    sleep 1.5
    mkdir -p /tmp/icd-$b && echo "$(cd $d && pwd)/client/librgpu-icd.so" > /tmp/icd-$b/rgpu.icd
    for kib in 256 1024 4096 16384; do
      echo -n "$b unix "; OCL_ICD_VENDORS=/tmp/icd-$b RGPU_SERVER=unix:/tmp/r-$b.sock $P rgpu $kib
      echo -n "$b tcp  "; OCL_ICD_VENDORS=/tmp/icd-$b RGPU_SERVER=127.0.0.1:7461 $P rgpu $kib
    done
    kill $pu $pt; wait $pu $pt 2>/dev/null
  done
done 2>&1 | tee $OUT/create_probe.txt
for r in 1 2; do
  for b in old new; do
    c=$N; [ $b = old ] && c=$O
    timeout 200 bash bench/on_device.sh $c $OUT/mm/$b$r --tasks matmul --no-links --matmul-budget 1 \
      --matmul-sizes 64 128 256 512 1024 2048 > /dev/null 2>&1
    echo "$b$r rc=$?"
  done
done
cd $OUT && tar czf mm.tar.gz mm && rm -rf mm
