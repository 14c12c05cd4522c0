#!/usr/bin/env bash
# An LC tenant alone (rgpud config: tenant lc latency-critical, be best-effort): the b2b probe
# (370 us kernel + 4-byte read, back to back and after 4 ms pauses) and tail_probe (50 us
# kernel after 4 ms pauses), rgpud-base against rgpud-new alternating, four reps.
C=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$C/lib:${LD_LIBRARY_PATH:-}"
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
d=$(mktemp -d); echo "$C/client/librgpu-icd.so" > $d/rgpu.icd
for rep in 1 2 3 4; do
  echo "== rep $rep native"; OCL_ICD_VENDORS=$V $C/bench/b2b NVIDIA 370; OCL_ICD_VENDORS=$V $C/bench/tail_probe NVIDIA 50 4000 500 | head -1
  for v in base new; do
    sock=/tmp/lc-$v.sock; rm -f $sock
    OCL_ICD_VENDORS=$V $C/server/rgpud-$v --listen unix:$sock --config $C/rgpud.toml > /tmp/rgpud-lc-$v.log 2>&1 &
    pid=$!; for i in $(seq 50); do [ -S $sock ] && break; sleep 0.1; done
    echo "== rep $rep lc $v"
    OCL_ICD_VENDORS=$d RGPU_SERVER=unix:$sock RGPU_TOKEN=lctoken $C/bench/b2b rgpu 370
    OCL_ICD_VENDORS=$d RGPU_SERVER=unix:$sock RGPU_TOKEN=lctoken $C/bench/tail_probe rgpu 50 4000 500 | head -1
    kill $pid; wait $pid 2>/dev/null
  done
done
