#!/usr/bin/env bash
# Session 40, call 2 (carry .carry-new as call 1): which of `fair`'s mechanisms makes the
# driver's thread of each waiting tenant spin (session 39: 92-97% of a CPU under `fair`, none
# under `fifo`; and the driver's enqueue 20.6 µs with four tenants against 13.5 alone): four
# `tiny` loops two deep with one mechanism off per mode, every rgpu thread's CPU sampled
# (bench/schedstat_sample.py; rgpud's pids in the report come in the order of the modes).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
python3 bench/schedstat_sample.py $OUT/sched.tsv 150 0.25 &
sp=$!
timeout 140 bash bench/sharing_on_device.sh .carry-new $OUT/ab --matrix --equal \
  --scenarios mx_equal4_tiny --be-depth 2 --be-kinds tiny \
  --modes fifo,fair,fair/--gate-chained=0/--gate-first=0,fair/--twin-queues=0,fair/--pipe-loops=0,fair/--launch-thread=0 \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/s.log 2>&1
echo "== ab rc=$?"
kill $sp; wait $sp 2>/dev/null
grep -E '^\| tiny \||^\| BE kind' $OUT/ab/sharing.md
python3 bench/schedstat_report.py $OUT/sched.tsv 5 > $OUT/sched-report.txt
gzip $OUT/sched.tsv
grep rgpud $OUT/sched-report.txt
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*.log $OUT/*/sharing.json $OUT/*/rgpud-logs.tar.gz
