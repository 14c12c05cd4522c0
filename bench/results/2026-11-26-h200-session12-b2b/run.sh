#!/usr/bin/env bash
# $1 = carry (rgpud, icd, lib)
C=$(cd "$1" && pwd); B=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$C/lib:${LD_LIBRARY_PATH:-}"
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
mk() { d=$(mktemp -d); echo "$C/client/librgpu-icd.so" > $d/rgpu.icd; echo $d; }
RV=$(mk)
for rep in 1 2; do
OCL_ICD_VENDORS=$V $B/b2b NVIDIA 370
for pol in fair fifo; do
  sock=/tmp/b2b-$pol.sock; rm -f $sock
  OCL_ICD_VENDORS=$V $C/server/rgpud --listen unix:$sock --policy $pol > /tmp/rgpud-$pol.log 2>&1 &
  pid=$!; for i in $(seq 50); do [ -S $sock ] && break; sleep 0.1; done
  echo "-- rgpu unix $pol"; OCL_ICD_VENDORS=$RV RGPU_SERVER=unix:$sock $B/b2b rgpu 370
  kill $pid; wait $pid 2>/dev/null
done
OCL_ICD_VENDORS=$V $C/server/rgpud --listen 127.0.0.1:29555 > /tmp/rgpud-tcp.log 2>&1 &
pid=$!; sleep 1
echo "-- rgpu tcp fair"; OCL_ICD_VENDORS=$RV RGPU_SERVER=127.0.0.1:29555 $B/b2b rgpu 370
kill $pid; wait $pid 2>/dev/null
done
