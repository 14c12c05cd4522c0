#!/usr/bin/env bash
# Session 39, call 3: a session waits for its held launches' turn before it waits in the
# driver (Scheduler::AwaitDispatch): four `tiny` loops two deep under `fair` against `fifo`,
# twice, with the clients' stamps (bench/stamps_turns.py: the gaps within a turn, which call 2
# found 25-50% longer with four tenants than alone) and every rgpu thread's CPU
# (bench/schedstat_sample.py: call 1 found eight threads spinning).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
lscpu | grep -E "^CPU\(s\)|Thread|Core|Socket|Model name" | tee $OUT/lscpu.txt
python3 bench/schedstat_sample.py $OUT/sched.tsv 200 0.25 &
sp=$!
mono() { python3 -c 'import time; print(f"{time.monotonic():.4f}")'; }
run() {  # NAME SCENARIO MODE
  mkdir -p /tmp/st/$1
  echo "start $1 $(mono)" >> $OUT/marks.txt
  RGPU_STAMPS=/tmp/st/$1/s timeout 80 bash bench/sharing_on_device.sh .carry-new $OUT/$1 --matrix --equal \
    --scenarios $2 --be-depth 2 --be-kinds tiny --modes $3 \
    --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/s.log 2>&1
  echo "== $1: $2 $3 rc=$?"
  echo "end $1 $(mono)" >> $OUT/marks.txt
  grep -E '^\| tiny \|' $OUT/$1/sharing.md
  python3 bench/stamps_turns.py /tmp/st/$1/s.* 2>&1
}
run x4 mx_equal4_tiny fifo,fair
run x4b mx_equal4_tiny fifo,fair
run x2 mx_equal2_tiny fair
run solo mx_be_tiny fair
kill $sp; wait $sp 2>/dev/null
cat $OUT/marks.txt
python3 bench/schedstat_report.py $OUT/sched.tsv 5 > $OUT/sched-report.txt
gzip $OUT/sched.tsv
grep -E "rgpud" $OUT/sched-report.txt | head -60
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*.log $OUT/*/sharing.json $OUT/*/rgpud-logs.tar.gz
