#!/usr/bin/env bash
# Session 39, call 1: four `tiny` loops two deep, `fifo` and `fair`, with the clients' waits
# spinning 10 ms (the default on 16 CPUs) and 30 ms (session 38's untested lead: a tenant waits
# about 24 ms for its turn, so with 10 ms it sleeps when its turn begins), twice each,
# interleaved; every rgpu thread's CPU and run-queue wait sampled throughout
# (bench/schedstat_sample.py): whether woken threads wait for a CPU.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
python3 bench/schedstat_sample.py $OUT/sched.tsv 260 0.25 &
sp=$!
mono() { python3 -c 'import time; print(f"{time.monotonic():.4f}")'; }
for round in 1 2; do
  for spin in 10000 30000; do
    d=$OUT/r$round-s$spin
    echo "start $d $(mono)" >> $OUT/marks.txt
    RGPU_SPIN_US=$spin timeout 80 bash bench/sharing_on_device.sh .carry-new $d --matrix \
      --scenarios mx_equal4_tiny --be-depth 2 --be-kinds tiny --modes fifo,fair \
      --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/s.log 2>&1
    rc=$?
    echo "end $d $(mono)" >> $OUT/marks.txt
    echo "round $round RGPU_SPIN_US=$spin rc=$rc"; grep -E '^\| (tiny|fifo|fair)' $d/sharing.md | head -12
  done
done
kill $sp; wait $sp 2>/dev/null
cat $OUT/marks.txt
python3 bench/schedstat_report.py $OUT/sched.tsv 5 > $OUT/sched-report.txt
gzip $OUT/sched.tsv
head -120 $OUT/sched-report.txt
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*.log $OUT/*/sharing.json
