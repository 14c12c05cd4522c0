#!/usr/bin/env bash
# Session 39, call 5 (carry .carry-new): rgpu-probe-driver --pending with a case like rgpud's
# held launches (two kernels behind user events on a profiling queue in each of three other
# contexts); then four `tiny` loops two deep under `fair` while bench/thread_syscalls.py
# samples what each busy rgpud thread is doing (user space, or which system call): call 3
# found a thread per tenant, created by its session's thread, at 84-99% under `fair` only.
set -u
N=$(cd .carry-new && pwd)
. bench/device_vendors.sh
V=$(device_vendors $OUT/env.txt)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib timeout 120 $N/bench/rgpu-probe-driver --platform NVIDIA --pending --count 20000 > $OUT/pending.json 2>&1
echo "pending rc=$?"; cat $OUT/pending.json
python3 bench/thread_syscalls.py rgpud 400 0.005 > $OUT/syscalls-fair.txt 2>&1 &
sp=$!
mkdir -p /tmp/st/fair
RGPU_STAMPS=/tmp/st/fair/s timeout 80 bash bench/sharing_on_device.sh .carry-new $OUT/fair --matrix --equal \
  --scenarios mx_equal4_tiny --be-depth 2 --be-kinds tiny --modes fair \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/s.log 2>&1
echo "== fair rc=$?"
wait $sp
grep -E '^\| tiny \|' $OUT/fair/sharing.md
python3 bench/stamps_turns.py /tmp/st/fair/s.* 2>&1
cat $OUT/syscalls-fair.txt
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*.log $OUT/*/sharing.json $OUT/*/rgpud-logs.tar.gz
# The loop's steps through rgpud (bench/stamps_waits.py, one tenant of the four) and a direct
# launch's steps in rgpud (bench/stamps_held.py --direct), then the same for one tenant alone.
steps() {
  C=$(for f in /tmp/st/$1/s.*; do [ "$(grep -c '^21 ' $f)" -gt 1000 ] && echo $f; done | head -1)
  S=$(for f in /tmp/st/$1/s.*; do [ "$(grep -c '^13 ' $f)" -gt 1000 ] && echo $f; done | head -1)
  python3 bench/stamps_waits.py $C $S
  python3 bench/stamps_held.py --direct $S
}
steps fair
mkdir -p /tmp/st/solo
RGPU_STAMPS=/tmp/st/solo/s timeout 80 bash bench/sharing_on_device.sh .carry-new $OUT/solo --matrix --equal \
  --scenarios mx_be_tiny --be-depth 2 --be-kinds tiny --modes fair \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/s.log 2>&1
echo "== solo rc=$?"
steps solo
# AwaitDispatch on and off, with `fifo`, in one run; every rgpu thread's CPU sampled.
python3 bench/schedstat_sample.py $OUT/sched.tsv 120 0.25 &
sp=$!
timeout 100 bash bench/sharing_on_device.sh .carry-new $OUT/ab --matrix --equal \
  --scenarios mx_equal4_tiny --be-depth 2 --be-kinds tiny --modes fifo,fair,fair/--await-dispatch=0 \
  --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/s.log 2>&1
echo "== ab rc=$?"
kill $sp; wait $sp 2>/dev/null
grep -E '^\| tiny \|' $OUT/ab/sharing.md
python3 bench/schedstat_report.py $OUT/sched.tsv 5 > $OUT/sched-report.txt
gzip $OUT/sched.tsv
grep rgpud $OUT/sched-report.txt
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*.log $OUT/*/sharing.json $OUT/*/rgpud-logs.tar.gz
