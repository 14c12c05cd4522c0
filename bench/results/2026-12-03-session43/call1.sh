#!/usr/bin/env bash
# Session 43, call 1 (carry .carry-new of 10294ba, session 42's last build; plus
# .carry-new/native-sharing.json = session 37's call1/d1/sharing.json, native equal tenants one
# deep, and .carry-new/native-matrix.json = session 42's call3/mx/sharing.json): how far runs
# spread where session 42 had one run: (a) equal tenants one deep, `fifo` and `fair`, twice
# (session 42's alone read 0.94 of `fifo` on a disturbed host); (b) the 370 µs LC beside `tiny`
# under every arrival process, `fair` parking and gated, twice (bursty read 4.99x parking
# against 1.71x gated once).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
eq() {  # NAME
  timeout 150 bash bench/sharing_on_device.sh .carry-new $OUT/$1 --matrix --equal --be-depth 1 \
    --be-kinds tiny,brief --modes fifo,fair \
    --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/$1.log 2>&1
  echo "$1 rc=$?"
  sed -n '/## Matrix equal/,/## Accounting/p' $OUT/$1/sharing.md | grep -E "^\| (tiny|brief|membound|BE kind)"
}
mx() {  # NAME
  timeout 200 bash bench/sharing_on_device.sh .carry-new $OUT/$1 --matrix \
    --scenarios mx_lc_bursty_370,mx_periodic_370_tiny,mx_poisson_370_tiny,mx_bursty_370_tiny,mx_pareto_370_tiny \
    --modes fair,fair/--park-first=0 --baseline .carry-new/native-matrix.json \
    --duration 2.5 --timeout 25 > $OUT/$1.log 2>&1
  echo "$1 rc=$?"
  sed -n '/## Matrix/,/## Accounting/p' $OUT/$1/sharing.md | grep -E "^\| (mx_|cell|scenario)" | head -20
}
eq eq-a
mx mx-a
eq eq-b
mx mx-b
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt
