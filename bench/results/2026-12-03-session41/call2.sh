#!/usr/bin/env bash
# Session 41, call 2 (carry .carry-new of 2d28a42 as call 1): call 1 read `tiny` x4 two deep
# at 1.15 of `fifo` under `fair`, 1.38 with --twin-queues=0 and 1.32 with --pipe-loops=0 (one
# run each). Here those modes side by side, three rounds, with one, two and four tenants, and
# `brief`/`membound` once: is either mechanism a loss for equal tenants?
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
run() {  # NAME DEPTH KINDS
  timeout 170 bash bench/sharing_on_device.sh .carry-new $OUT/$1 --matrix --equal --be-depth $2 \
    --be-kinds $3 --modes fifo,fair,fair/--twin-queues=0,fair/--pipe-loops=0,fair/--twin-queues=0/--pipe-loops=0 \
    --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/$1.log 2>&1
  echo "$1 rc=$?"
  sed -n '/## Matrix equal/,/## Accounting/p' $OUT/$1/sharing.md | grep -E "^\| (tiny|brief|membound|BE kind)"
}
run tiny-a 2 tiny
run tiny-b 2 tiny
run tiny-c 2 tiny
run other 2 brief,membound
run tiny1 1 tiny
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*/rgpud-logs.tar.gz $OUT/*.log $OUT/*/sharing.json
