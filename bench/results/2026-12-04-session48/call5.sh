#!/usr/bin/env bash
# Session 48, call 5 (carry .carry-lab and .lab-deps from `lab/tools/make_carry.sh .carry-lab
# build` at 85b7f37): call 4 found that the driver delivers a write on another queue of one
# context to a running kernel with up to 64 queues; through rgpud with a context group the lab's
# persistent kernel never saw its stop flag (session 47). Which part of rgpud: seed 000's
# "core x1 + persistent x1", one round, the poll limit 4,000,000, under fair (control), fair
# with a group (debug log), fifo with a group, and fair with a group less the launch pipe's loop
# and less the launch thread.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
C="--only=core x1 + persistent x1,--rounds=1,--set=persistent.max_polls=4000000,--round-timeout=60"
LAB_COMMIT=$(cat .carry-lab/COMMIT) TOTAL_BUDGET=300 STEP_TIMEOUT=60 bash lab/tools/on_device.sh /tmp/r \
    "seed000-persistent:rgpu:--policy=fair,$C:fair" \
    "seed000-persistent:rgpu:--policy=fair,--context-group,$C,--rgpud-arg=--log-level=debug:fairgroup" \
    "seed000-persistent:rgpu:--policy=fifo,--context-group,$C:fifogroup" \
    "seed000-persistent:rgpu:--policy=fair,--context-group,$C,--rgpud-arg=--pipe-loops=0:nopipe" \
    "seed000-persistent:rgpu:--policy=fair,--context-group,$C,--rgpud-arg=--launch-thread=0:nothread" 2>&1 | grep -E "^==|rc=|persistent x1:|FAILED|ERROR" | head -40
grep -rho '"stopped_by": *"[a-z_]*"' /tmp/r --include=results.json | sort | uniq -c
for f in $(find /tmp/r -name results.json); do echo "$f: $(grep -o '"stopped_by": *"[a-z_]*"' $f | tr '\n' ' ')"; done
tar czf $OUT/lab.tar.gz -C /tmp/r .
