#!/usr/bin/env bash
# Session 17, call 3 (device tool, carry .carry-new .carry-head): what one buffer creation from
# host data costs natively and through rgpud (probe/create_probe.cpp, built here into the
# carry), HEAD 2c85128's rgpud and ICD (old) and the working tree's (new), Unix socket and TCP.
set -u
N=.carry-new
export LD_LIBRARY_PATH=$PWD/$N/lib
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
P=$N/bench/create_probe
mkdir -p $OUT
for r in 1 2; do
  for kib in 1024 4096; do OCL_ICD_VENDORS=$V $P NVIDIA $kib; done
  for b in old new; do
    d=$N; [ $b = old ] && d=.carry-head
    $d/server/rgpud --listen unix:/tmp/r-$b.sock --log-level warn > /tmp/r-$b-u.log 2>&1 & pu=$!
    $d/server/rgpud --listen 127.0.0.1:7461 --log-level warn > /tmp/r-$b-t.log 2>&1 & pt=$!
    sleep 1.5
    mkdir -p /tmp/icd-$b && echo "$PWD/$d/client/librgpu-icd.so" > /tmp/icd-$b/rgpu.icd
    for kib in 1024 4096; do
      echo -n "$b unix "; OCL_ICD_VENDORS=/tmp/icd-$b RGPU_SERVER=unix:/tmp/r-$b.sock $P rgpu $kib
      echo -n "$b tcp  "; OCL_ICD_VENDORS=/tmp/icd-$b RGPU_SERVER=127.0.0.1:7461 $P rgpu $kib
    done
    kill $pu $pt; wait $pu $pt 2>/dev/null
  done
done 2>&1 | tee $OUT/create_probe.txt
