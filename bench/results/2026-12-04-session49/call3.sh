#!/usr/bin/env bash
# Session 49, call 3 (carry .carry-new of ad0d018 plus the ring fix: a thread that counts itself
# as spinning and waits inside a frame naps 20 us instead of 100 ms): in call 1 more than 1% of
# the 4-byte reads and requests over the Unix socket with --inline-waits=0 took 100 ms more.
# The overhead benchmark's sync round trips and requests with rgpud's default and with
# --inline-waits=0, two rounds, the order alternating.
set -u
N=$(pwd)/.carry-new
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
ovh() {  # mode, round
  local extra=()
  [ $1 = iw0 ] && extra=(--rgpud-arg=--inline-waits=0)
  timeout 200 bash bench/on_device.sh $N $OUT/ovh-$1-r$2 --tasks sync requests --no-links \
    --iterations 5000 --request-us 10,50,370,2000,10000 --worker-timeout 120 "${extra[@]}" \
    > $OUT/ovh-$1-r$2.log 2>&1
  echo "ovh $1 r$2 rc=$?"
}
for m in iw0 default; do ovh $m 1; done
for m in default iw0; do ovh $m 2; done
cd $OUT && tar czf ovh.tar.gz ovh-* && rm -rf ovh-* && ls
