#!/usr/bin/env bash
# Session 47, call 3 (carry .carry-lab and .lab-deps from `lab/tools/make_carry.sh .carry-lab
# build`: 041f35c less --lc-ahead-of-kernel, plus a warning in rgpud when a complete event's
# profiling times are refused): session 44's lab run with a context group failed one config
# (smem x3 + core x1: clGetEventProfilingInfo -7 after clWaitForEvents). Seed 000's tables
# 1-2 under fair with a context group, twice, and tables 4-7 (persistent) likewise once.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
LAB_COMMIT=$(cat .carry-lab/COMMIT) TOTAL_BUDGET=500 STEP_TIMEOUT=150 bash lab/tools/on_device.sh /tmp/r \
    seed000-tables1-2:rgpu:--policy=fair,--context-group \
    seed000-tables1-2:rgpu:--policy=fair,--context-group:again \
    seed000-persistent:rgpu:--policy=fair,--context-group 2>&1 | grep -E "^==|rc=|FAILED|ERROR" | head -40
grep -rh "refused\|warn" /tmp/r/*/*/logs/rgpud.log | head -20
tar czf $OUT/lab.tar.gz -C /tmp/r .
ls -la $OUT
