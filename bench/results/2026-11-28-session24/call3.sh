#!/usr/bin/env bash
# Session 24, call 3 (carries .carry-lab and .lab-deps from `lab/tools/make_carry.sh .carry-lab
# build`, COMMIT names the build): the lab's seed-000 tables 1-2 under rgpu fair, rgpu fair with
# every worker in one context group (new: --context-group), time-slicing and MPS, then the
# persistent-kernel tables through rgpu fair; results tarred into $OUT/lab.tar.gz.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
LAB_COMMIT=$(cat .carry-lab/COMMIT) TOTAL_BUDGET=560 STEP_TIMEOUT=125 bash lab/tools/on_device.sh /tmp/r \
    seed000-tables1-2:rgpu:--policy=fair seed000-tables1-2:rgpu:--policy=fair,--context-group \
    seed000-tables1-2:timeslice seed000-tables1-2:mps seed000-persistent:rgpu:--policy=fair 2>&1 | tail -40
tar czf $OUT/lab.tar.gz -C /tmp/r .
ls -la $OUT
