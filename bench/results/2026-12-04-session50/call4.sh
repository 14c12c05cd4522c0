#!/usr/bin/env bash
# Session 50, call 4 (carry .carry-new with corun_probe, built here from corun_probe.cpp with
# `g++ -O2 -std=c++20 corun_probe.cpp -lOpenCL`): natively, in one context, does a
# memory-bound saxpy stream on a second queue slow a compute-bound LC kernel of 4 work-groups
# per compute unit (the matrix's LC shape), and how much of its solo rate does it keep there?
set -u
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
for us in 2000 370; do
  OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=.carry-new/lib timeout 200 .carry-new/bench/corun_probe \
    --platform NVIDIA --lc-us $us --trials 200 > $OUT/corun-$us.json 2> $OUT/corun-$us.log
  echo "lc $us rc=$?"; cat $OUT/corun-$us.json; echo
done
