#!/usr/bin/env bash
# Session 20, call 3: reads a client waits for over TCP, landed in pinned staging
# (new: --pinned-staging-mib 16, the default) against the same build with it off
# (new-nopin: blocking pieces into ordinary memory, as in call 2) and 681cf2e (old), in one call:
#  A. read_probe (blocking reads back to back, 256 KiB-16 MiB): native, old, new-nopin, new,
#     and new once more with rgpud's debug log.
#  B. overhead benchmark, bandwidth to 64 MiB and the matrix multiply (256-1024), old / new
#     alternating twice, then new-nopin once.
# Carries: .carry-new (this build), .carry-old (681cf2e, without lib/).
set -u
O=$OUT
[ -d .carry-old/lib ] || cp -r .carry-new/lib .carry-old/lib
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
g++ -O2 -std=c++20 -o /tmp/read_probe bench/results/2026-11-27-session20/read_probe.cpp -lOpenCL
sizes="262144 524288 1048576 2097152 4194304 16777216"
{
  echo "== native"
  for s in $sizes; do OCL_ICD_VENDORS=$V /tmp/read_probe $s 300 NVIDIA; done
  for v in old new-nopin new new-debug; do
    C=$(cd .carry-${v%%-*} && pwd); args=""
    [ $v = new-debug ] && args="--log-level debug"
    [ $v = new-nopin ] && args="--pinned-staging-mib 0"
    d=$(mktemp -d); echo "$C/client/librgpu-icd.so" > $d/rgpu.icd
    LD_LIBRARY_PATH=$C/lib OCL_ICD_VENDORS=$V $C/server/rgpud --listen 127.0.0.1:7799 $args > $O/rgpud-$v.log 2>&1 &
    pid=$!; for i in $(seq 50); do grep -q "listening" $O/rgpud-$v.log && break; sleep 0.1; done
    echo "== $v tcp"
    for s in $sizes; do LD_LIBRARY_PATH=$C/lib OCL_ICD_VENDORS=$d RGPU_SERVER=127.0.0.1:7799 /tmp/read_probe $s 300; done
    kill $pid; wait $pid 2>/dev/null
  done
} > $O/read_probe.txt 2>&1
cat $O/read_probe.txt
grep -i 'pinned staging' $O/rgpud-new-debug.log | head -2
grep 'pipelined read of 1024 KiB' $O/rgpud-new-debug.log | tail -2
grep 'pipelined read of 16384 KiB' $O/rgpud-new-debug.log | tail -2
mkdir -p $O/logs && mv $O/rgpud-*.log $O/logs/
run() {  # run LABEL CARRY [rgpud args...]
  local label=$1 carry=$2; shift 2
  local extra=(); for a in "$@"; do extra+=("--rgpud-arg=$a"); done
  timeout 130 bash bench/on_device.sh .carry-$carry $O/bw-$label --tasks bandwidth,matmul --max-bytes 64M \
    --matmul-sizes 256 512 1024 --matmul-budget 1 --no-links --worker-timeout 120 "${extra[@]}" > /dev/null 2>&1
  echo "bw $label rc=$?"
  grep -A13 'Bandwidth: writes' $O/bw-$label/overhead.md | grep -E '^\| (16 MiB|64 MiB)'
  grep -A13 'Bandwidth: reads' $O/bw-$label/overhead.md | grep -E '^\| (256 KiB|1 MiB|4 MiB|16 MiB|64 MiB)'
  grep -A9 'Matrix multiply, end' $O/bw-$label/overhead.md | grep -E '^\| (512|1024) '
}
run old-1 old; run new-1 new; run old-2 old; run new-2 new; run nopin-1 new --pinned-staging-mib=0
cd $O && tar czf runs.tar.gz bw-* logs read_probe.txt && rm -rf bw-* logs
