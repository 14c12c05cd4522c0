#!/usr/bin/env bash
# $@ = variants (dirs under .carry-ab/v); common libs in .carry-ab/common/lib
A=$(cd "$(dirname "$0")/.." && pwd); B=$A/b2b
export LD_LIBRARY_PATH="$A/common/lib:${LD_LIBRARY_PATH:-}"
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
for rep in 1 2 3; do
  echo "== rep $rep native"; OCL_ICD_VENDORS=$V $B/b2b NVIDIA 370
  for v in "$@"; do
    C=$A/v/$v
    d=$(mktemp -d); echo "$C/client/librgpu-icd.so" > $d/rgpu.icd
    sock=/tmp/b2b-$v.sock; rm -f $sock
    OCL_ICD_VENDORS=$V $C/server/rgpud --listen unix:$sock > /tmp/rgpud-$v.log 2>&1 &
    pid=$!; for i in $(seq 50); do [ -S $sock ] && break; sleep 0.1; done
    echo "== rep $rep $v unix fair"; OCL_ICD_VENDORS=$d RGPU_SERVER=unix:$sock $B/b2b rgpu 370
    kill $pid; wait $pid 2>/dev/null
    OCL_ICD_VENDORS=$V $C/server/rgpud --listen 127.0.0.1:29555 > /tmp/rgpud-tcp-$v.log 2>&1 &
    pid=$!; sleep 1
    echo "== rep $rep $v tcp fair"; OCL_ICD_VENDORS=$d RGPU_SERVER=127.0.0.1:29555 $B/b2b rgpu 370
    kill $pid; wait $pid 2>/dev/null
  done
done
