#!/usr/bin/env bash
# Session 29, call 3: where does a process's enqueue rate come from? rgpu-probe-driver
# --launch-only (five times 20,000 event-less enqueues natively, and where each of the
# process's threads ran): 16 unpinned processes, then one pinned to each CPU (taskset).
set -u
N=.carry-new
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
P="env OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib $N/bench/rgpu-probe-driver --platform NVIDIA --count 20000 --launch-only"
for i in $(seq 16); do echo "free $i $($P)"; done | tee $OUT/free.txt | cut -c1-160
for c in $(seq 0 15); do echo "cpu$c $(taskset -c $c $P)"; done | tee $OUT/pinned.txt | cut -c1-160
