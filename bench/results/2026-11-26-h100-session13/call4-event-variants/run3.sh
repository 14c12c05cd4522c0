#!/usr/bin/env bash
# $@ = LABEL:VARIANT_DIR[:ENV=V,ENV=V]; variant dirs under .carry-ab/v; libs in .carry-ab/common/lib
A=$(cd "$(dirname "$0")/.." && pwd); B=$A/b2b
export LD_LIBRARY_PATH="$A/common/lib:${LD_LIBRARY_PATH:-}"
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
for rep in 1 2 3; do
  echo "== rep $rep native"; OCL_ICD_VENDORS=$V $B/b2b NVIDIA 370
  for spec in "$@"; do
    IFS=: read -r label v envs <<<"$spec"
    C=$A/v/$v
    d=$(mktemp -d); echo "$C/client/librgpu-icd.so" > $d/rgpu.icd
    sock=/tmp/b2b-$label.sock; rm -f $sock
    env ${envs//,/ } OCL_ICD_VENDORS=$V $C/server/rgpud --listen unix:$sock > /tmp/rgpud-$label.log 2>&1 &
    pid=$!; for i in $(seq 50); do [ -S $sock ] && break; sleep 0.1; done
    echo "== rep $rep $label unix fair"; OCL_ICD_VENDORS=$d RGPU_SERVER=unix:$sock $B/b2b rgpu 370
    kill $pid; wait $pid 2>/dev/null
  done
done
