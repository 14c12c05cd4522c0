#!/usr/bin/env bash
# Session 29, call 5: rgpud's launch thread (--launch-thread, on by default with 8 CPUs or more)
# against none, alternating (bench/ab_on_device.sh): bursts of 100 (three rounds of three
# invocations' --async-rounds 3) and of 100,000; then round trips and requests of 10 us and
# 370 us kernels with and without it, which a launch thread must not slow.
set -u
N=.carry-new
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
AB_ARGS="--async-rounds 3" timeout 200 bash bench/ab_on_device.sh $N /tmp/ab100 3 100 \
  thread=--launch-thread=1 none=--launch-thread=0 > /dev/null 2>&1
echo "ab100 rc=$?"; cat /tmp/ab100/summary.md | tee $OUT/ab100.md
AB_ARGS="--async-rounds 3" timeout 200 bash bench/ab_on_device.sh $N /tmp/ab100k 2 100000 \
  thread=--launch-thread=1 none=--launch-thread=0 > /dev/null 2>&1
echo "ab100k rc=$?"; cat /tmp/ab100k/summary.md | tee $OUT/ab100k.md
for v in thread none; do
  o=1; [ $v = none ] && o=0
  timeout 150 bash bench/on_device.sh $N /tmp/req-$v --tasks sync,requests --iterations 2000 \
    --request-us 10,370 --no-links --worker-timeout 120 --rgpud-arg=--launch-thread=$o > /dev/null 2>&1
  echo "== req $v rc=$?"
  grep -A10 '^## Synchronous' /tmp/req-$v/overhead.md | grep '^|'
  grep -A8 '^## Requests' /tmp/req-$v/overhead.md | grep '^|'
done
rm -f /tmp/ab100*/*/rgpud-*.log /tmp/req-*/rgpud-*.log
(cd /tmp && tar czf $OUT/c5.tar.gz ab100 ab100k req-thread req-none)
