#!/usr/bin/env bash
# Session 30, call 4 (.carry-new = the commit in .carry-new/COMMIT, .carry-old = 0a7030b's
# rgpud): (1) what an event costs NVIDIA's enqueue on a queue with profiling (as rgpud makes
# every queue) and without (rgpu-probe-driver --events); (2) events entered in batches
# ("new") against at the end of a burst ("old"), shape events, bursts of 100 and 100,000, two
# rounds; (3) the matrix's cells whose best-effort tenant launches short kernels with events
# (brief, tiny), whose accounting now samples those events: native, fair+shared and fair,
# 2.5 s per run, the native solo runs repeated three times.
set -u
for d in bench client icd lib; do [ -e .carry-old/$d ] || cp -r .carry-new/$d .carry-old/; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
N=.carry-new
mkdir -p $OUT/probe
for i in 1 2 3; do
  OCL_ICD_VENDORS=$V LD_LIBRARY_PATH=$N/lib timeout 60 $N/bench/rgpu-probe-driver --platform NVIDIA --events \
    > $OUT/probe/events-$i.json 2>&1
  cat $OUT/probe/events-$i.json
done
W=/tmp/c4 && rm -rf $W && mkdir -p $W
for round in 1 2; do
  for n in 100 100000; do
    for v in new old; do
      c=.carry-new
      [ $v = old ] && c=.carry-old
      timeout 100 bash bench/on_device.sh $c $W/n$n-r$round-events-$v --tasks async --no-links \
        --iterations 100 --async-launches $n --async-rounds 3 --async-shape events \
        --worker-timeout 90 --rgpud-arg=--launch-thread=1 > /dev/null 2>&1
      echo "n$n r$round events $v rc=$?"
    done
  done
done
python3 bench/results/2026-11-29-session29/pool_rates.py $W
rm -f $W/*/rgpud-*.log
timeout 330 bash bench/sharing_on_device.sh $N $W/mx --matrix --modes native,fair+shared,fair \
  --scenarios mx_lc_poisson_370,mx_lc_periodic_370,mx_lc_poisson_50,mx_be_brief,mx_be_tiny,mx_poisson_370_brief,mx_poisson_370_tiny,mx_periodic_370_brief,mx_periodic_370_tiny,mx_poisson_50_brief,mx_poisson_50_tiny \
  --solo-repeats 3 --duration 2.5 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -A14 '^## Matrix (' $W/mx/sharing.md | grep '^|'
rm -f $W/mx/device-log.txt $W/mx/progress.txt
(cd /tmp && tar czf $OUT/c4.tar.gz c4)
