#!/usr/bin/env bash
# Session 36, call 2 (carry .carry-new): the launch rate (issue 12, outcome 2) of this build:
# bursts of 100 and of 100,000 launches, three invocations of three runs per path each
# (bench/ab_on_device.sh, one variant), every run against the native runs of its invocation.
set -u
N=.carry-new
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for n in 100 100000; do
  AB_ARGS="--async-rounds 3" timeout 240 bash bench/ab_on_device.sh $N /tmp/ab$n 3 $n cur= > /dev/null 2>&1
  echo "ab$n rc=$?"; cat /tmp/ab$n/summary.md | tee $OUT/ab$n.md
done
rm -f /tmp/ab*/*/rgpud-*.log
(cd /tmp && tar czf $OUT/c2.tar.gz ab100 ab100000)
