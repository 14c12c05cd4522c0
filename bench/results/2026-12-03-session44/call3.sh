#!/usr/bin/env bash
# Session 44, call 3 (carry as call 2: .carry-lab of cee30aa and .lab-deps): call 2 found the
# S-mem tenant alone 4-20% slower in wall time under rgpud fair than under fifo (220 / 236 /
# 204 ms against 196-199, the same 194 ms of kernels, no launch held). Seed 000's tables 1-2
# under fifo, fair, and fair with one mechanism off at a time: the session's launch thread
# for closed loops (--pipe-loops=0), the launch thread itself (--launch-thread=0).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
LAB_COMMIT=$(cat .carry-lab/COMMIT) TOTAL_BUDGET=270 STEP_TIMEOUT=60 bash lab/tools/on_device.sh /tmp/r \
    seed000-tables1-2:rgpu:--policy=fifo seed000-tables1-2:rgpu:--policy=fair \
    seed000-tables1-2:rgpu:--policy=fair,--rgpud-arg=--pipe-loops=0:nopipe \
    seed000-tables1-2:rgpu:--policy=fair,--rgpud-arg=--launch-thread=0:nothread 2>&1 | grep -E "^==|rc=" 
for d in /tmp/r/seed000-tables1-2*/rgpu-*; do echo "$d"; done
tar czf $OUT/lab.tar.gz -C /tmp/r .
ls -la $OUT
