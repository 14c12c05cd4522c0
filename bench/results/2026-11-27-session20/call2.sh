#!/usr/bin/env bash
# Session 20, call 2: rgpud's reads over TCP cut into pieces from 512 KiB, and a read the
# client waits for made by blocking driver calls piece by piece (new), against 681cf2e (old:
# reads under 8 MiB go whole), in one call:
#  A. read_probe (blocking reads back to back, 256 KiB-4 MiB): native, then old / new over TCP,
#     new once more with rgpud's debug log (each pipelined read's timeline).
#  B. overhead benchmark, bandwidth to 64 MiB (three rounds each, raw floors beside) and the
#     matrix multiply (256-1024), old / new alternating twice.
# Carries: .carry-new (this build), .carry-old (681cf2e, without lib/).
set -u
O=$OUT
[ -d .carry-old/lib ] || cp -r .carry-new/lib .carry-old/lib
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
g++ -O2 -std=c++20 -o /tmp/read_probe bench/results/2026-11-27-session20/read_probe.cpp -lOpenCL
sizes="262144 524288 1048576 2097152 4194304"
{
  echo "== native"
  for s in $sizes; do OCL_ICD_VENDORS=$V /tmp/read_probe $s 300 NVIDIA; done
  for v in old new new-debug; do
    C=$(cd .carry-${v%-debug} && pwd); args=""; [ $v = new-debug ] && args="--log-level debug"
    d=$(mktemp -d); echo "$C/client/librgpu-icd.so" > $d/rgpu.icd
    LD_LIBRARY_PATH=$C/lib OCL_ICD_VENDORS=$V $C/server/rgpud --listen 127.0.0.1:7799 $args > $O/rgpud-$v.log 2>&1 &
    pid=$!; for i in $(seq 50); do grep -q "listening" $O/rgpud-$v.log && break; sleep 0.1; done
    echo "== $v tcp"
    for s in $sizes; do LD_LIBRARY_PATH=$C/lib OCL_ICD_VENDORS=$d RGPU_SERVER=127.0.0.1:7799 /tmp/read_probe $s 300; done
    kill $pid; wait $pid 2>/dev/null
  done
} > $O/read_probe.txt 2>&1
cat $O/read_probe.txt
grep 'pipelined read' $O/rgpud-new-debug.log | awk '{print $7, $8}' | sort | uniq -c
grep 'pipelined read of 1024 KiB' $O/rgpud-new-debug.log | tail -3
grep 'pipelined read of 4096 KiB' $O/rgpud-new-debug.log | tail -3
mkdir -p $O/logs && mv $O/rgpud-*.log $O/logs/
for r in 1 2; do
  for v in old new; do
    timeout 130 bash bench/on_device.sh .carry-$v $O/bw-$v-$r --tasks bandwidth,matmul --max-bytes 64M \
      --matmul-sizes 256 512 1024 --matmul-budget 1 --no-links --worker-timeout 120 > /dev/null 2>&1
    echo "bw $v $r rc=$?"
    grep -A13 'Bandwidth: writes' $O/bw-$v-$r/overhead.md | grep -E '^\| (16 MiB|64 MiB)'
    grep -A13 'Bandwidth: reads' $O/bw-$v-$r/overhead.md | grep -E '^\| (256 KiB|1 MiB|4 MiB|16 MiB|64 MiB)'
    grep -A9 'Matrix multiply, end' $O/bw-$v-$r/overhead.md | grep -E '^\| (512|1024) '
  done
done
cd $O && tar czf runs.tar.gz bw-* logs read_probe.txt && rm -rf bw-* logs
