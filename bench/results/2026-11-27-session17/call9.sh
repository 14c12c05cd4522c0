#!/usr/bin/env bash
# Session 17, call 9 (device tool, carry .carry-new): the build with --heap-reuse (auto) on an
# NVIDIA device: rgpud's log says whether it turned the reuse on, and create_probe through it
# (auto, then --heap-reuse off) beside native.
set -u
N=.carry-new
export LD_LIBRARY_PATH=$PWD/$N/lib
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
P=$N/bench/create_probe
mkdir -p $OUT /tmp/icd && echo "$PWD/$N/client/librgpu-icd.so" > /tmp/icd/rgpu.icd
(
OCL_ICD_VENDORS=$V $P NVIDIA 1024
for mode in auto off; do
  OCL_ICD_VENDORS=$V $N/server/rgpud --listen unix:/tmp/r-$mode.sock --heap-reuse $mode > /tmp/r-$mode.log 2>&1 & pu=$!
  sleep 1.5
  grep -E "device:|heap:" /tmp/r-$mode.log
  echo -n "$mode unix "; OCL_ICD_VENDORS=/tmp/icd RGPU_SERVER=unix:/tmp/r-$mode.sock $P rgpu 1024
  kill $pu; wait $pu 2>/dev/null
done
) 2>&1 | tee $OUT/heap_reuse.txt
