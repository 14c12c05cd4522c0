#!/usr/bin/env bash
# Session 25, call 6 (carries .carry-lab and .lab-deps from `lab/tools/make_carry.sh .carry-lab
# build`, COMMIT names the build, 41843fb): the lab's seed-000 tables 1-2 under rgpu fair with
# --gate-first on (the default), off (rgpud --gate-first=0, tag nogatefirst), and on again (tag
# again): the lab's workers wait for each kernel before the next (one launch in flight), the
# shape --gate-first is for. Results tarred into $OUT/lab.tar.gz.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
LAB_COMMIT=$(cat .carry-lab/COMMIT) TOTAL_BUDGET=180 STEP_TIMEOUT=65 bash lab/tools/on_device.sh /tmp/r \
    seed000-tables1-2:rgpu:--policy=fair \
    seed000-tables1-2:rgpu:--policy=fair,--rgpud-arg=--gate-first=0:nogatefirst \
    seed000-tables1-2:rgpu:--policy=fair:again 2>&1 | tail -30
tar czf $OUT/lab.tar.gz -C /tmp/r .
ls -la $OUT
