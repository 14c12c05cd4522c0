#!/usr/bin/env bash
# Session 44, call 2 (carries .carry-lab and .lab-deps from `lab/tools/make_carry.sh .carry-lab
# build`, COMMIT names the build, cee30aa): the lab's seed-000 tables 1-2 and 4-7 (persistent
# kernels) after issue 15's scheduling changes, every mode in one call: the OpenCL kernels
# natively (one process per tenant), through rgpud fifo, fair and fair with every worker in one
# context group, and the CUDA kernels under time-slicing and MPS. Results tarred into
# $OUT/lab.tar.gz.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
LAB_COMMIT=$(cat .carry-lab/COMMIT) TOTAL_BUDGET=570 STEP_TIMEOUT=80 bash lab/tools/on_device.sh /tmp/r \
    seed000-tables1-2:opencl seed000-tables1-2:rgpu:--policy=fifo seed000-tables1-2:rgpu:--policy=fair \
    seed000-tables1-2:rgpu:--policy=fair,--context-group seed000-tables1-2:timeslice seed000-tables1-2:mps \
    seed000-persistent:opencl seed000-persistent:rgpu:--policy=fifo seed000-persistent:rgpu:--policy=fair \
    seed000-persistent:timeslice seed000-persistent:mps 2>&1 | tail -40
tar czf $OUT/lab.tar.gz -C /tmp/r .
ls -la $OUT
