#!/usr/bin/env bash
# Session 42, call 1 (carry .carry-new of this session's build: parking also waits for a direct
# launch in flight before it, Scheduler::SettleQueue): `fifo`, `fair/--park-first=1` (no user
# event for a launch that waits for its turn) and `fair` (today's default, --park-first=0) side
# by side: `tiny` two deep twice with every thread's CPU sampled the first time, then `brief`
# and `membound`.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
run() {  # NAME DEPTH KINDS
  timeout 150 bash bench/sharing_on_device.sh .carry-new $OUT/$1 --matrix --equal --be-depth $2 \
    --be-kinds $3 --modes fifo,fair/--park-first=1,fair \
    --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/$1.log 2>&1
  echo "$1 rc=$?"
  sed -n '/## Matrix equal/,/## Accounting/p' $OUT/$1/sharing.md | grep -E "^\| (tiny|brief|membound|BE kind)"
  tar -xzOf $OUT/$1/rgpud-logs.tar.gz 2>/dev/null |
    grep -oE '[0-9]+ gated \([0-9]+ first on their queue, [0-9]+ at once, [0-9]+ of them through launch threads, [0-9]+ parked, [0-9]+ of them behind a launch they waited for, [0-9]+ after their queue.s work, [0-9]+ gated after all\), [0-9]+ held' | head -12
}
python3 bench/schedstat_sample.py $OUT/sched.tsv 60 0.25 &
sp=$!
run tiny-a 2 tiny
kill $sp; wait $sp 2>/dev/null
python3 bench/schedstat_report.py $OUT/sched.tsv 5 > $OUT/sched-report.txt
gzip $OUT/sched.tsv
grep rgpud $OUT/sched-report.txt | sort -k7 -n -r | head -16
run tiny-b 2 tiny
run other 2 brief,membound
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*.log $OUT/*/sharing.json $OUT/tiny-b/rgpud-logs.tar.gz $OUT/other/rgpud-logs.tar.gz
