#!/usr/bin/env bash
# Session 47, call 2 (carry .carry-new of 041f35c, with rgpu-bench-overhead): issue 12's
# requests (a kernel of 10 us to 10 ms, then a 4-byte blocking read), the synchronous round
# trips and 100,000 asynchronous launches (three rounds, alternating), native beside rgpu.
set -o pipefail
timeout 420 bash bench/on_device.sh .carry-new $OUT/ovh --tasks sync,async,requests --no-links \
  --iterations 2000 --request-us 10,50,370,2000,10000 --worker-timeout 150 2>&1 | tail -60
ls $OUT/ovh
