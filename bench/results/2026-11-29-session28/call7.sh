#!/usr/bin/env bash
# Session 28, call 7 (.carry-new = 0c9f680): does an event on every 64th launch (for a tenant's
# accounting) slow the driver's enqueues in a burst? rgpud --sample-every 64 (default) against
# 4096, alternating, three rounds, bursts of 100,000 and of 100 (bench/ab_on_device.sh).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 280 bash bench/ab_on_device.sh .carry-new /tmp/ab100k 3 100000 s64=--sample-every=64 s4096=--sample-every=4096 > /dev/null 2>&1
echo "ab100k rc=$?"; cat /tmp/ab100k/summary.md | tee $OUT/ab100k.md
timeout 250 bash bench/ab_on_device.sh .carry-new /tmp/ab100 3 100 s64=--sample-every=64 s4096=--sample-every=4096 > /dev/null 2>&1
echo "ab100 rc=$?"; cat /tmp/ab100/summary.md | tee $OUT/ab100.md
