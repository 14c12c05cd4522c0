#!/usr/bin/env bash
# Session 49, call 7 (carry .carry-new of 79af264 plus Unpark spinning up to 100 us for an aside
# thread that holds the frames only for its look at the socket): in call 3 one default run of
# two missed the TCP request target at p99 (+756 us for 10 ms kernels after an idle pause),
# where the reader may have slept on the aside thread's condition variable through such a look.
# The overhead benchmark's sync round trips and requests, the default, --serve-aside-us=0, the
# default.
set -u
N=$(pwd)/.carry-new
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
ovh() {  # mode, round
  local extra=()
  [ $1 = aside0 ] && extra=(--rgpud-arg=--serve-aside-us=0)
  timeout 150 bash bench/on_device.sh $N $OUT/ovh-$1-r$2 --tasks sync requests --no-links \
    --iterations 5000 --request-us 10,50,370,2000,10000 --worker-timeout 100 "${extra[@]}" \
    > $OUT/ovh-$1-r$2.log 2>&1
  echo "ovh $1 r$2 rc=$?"
}
ovh default 1; ovh aside0 1; ovh default 2
cd $OUT && tar czf ovh.tar.gz ovh-* && rm -rf ovh-* && ls
