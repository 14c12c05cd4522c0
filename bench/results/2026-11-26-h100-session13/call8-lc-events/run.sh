#!/usr/bin/env bash
# LC tenant alone: events sampled (default) against an event and a completion callback on
# every launch (--lc-sampled-events 0, which is what an LC launch beside another tenant gets).
A=$(cd "$(dirname "$0")" && pwd); C=$(cd "$1" && pwd)
export LD_LIBRARY_PATH="$C/lib:${LD_LIBRARY_PATH:-}"
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
d=$(mktemp -d); echo "$C/client/librgpu-icd.so" > $d/rgpu.icd
for rep in 1 2 3; do
  echo "== rep $rep native"; OCL_ICD_VENDORS=$V $A/b2b NVIDIA 370
  for v in sampled:--lc-sampled-events=1 every:--lc-sampled-events=0; do
    label=${v%%:*} flag=${v#*:}
    sock=/tmp/lc-$label.sock; rm -f $sock
    OCL_ICD_VENDORS=$V $C/server/rgpud --listen unix:$sock --config $A/rgpud.toml $flag > /tmp/rgpud-lc-$label.log 2>&1 &
    pid=$!; for i in $(seq 50); do [ -S $sock ] && break; sleep 0.1; done
    echo "== rep $rep lc $label"; OCL_ICD_VENDORS=$d RGPU_SERVER=unix:$sock RGPU_TOKEN=lctoken $A/b2b rgpu 370
    kill $pid; wait $pid 2>/dev/null
  done
done
