#!/usr/bin/env bash
# Session 29, call 2: does what runs beside rgpud's enqueuing thread slow NVIDIA's enqueue
# there? Call 1 showed a second thread asking the driver for an event's status costs each
# enqueue 1.0-1.5 us; here the client's spinning wait (clFinish spins up to 10 ms with 8 CPUs
# or more) and hardware threads sharing a core. Bursts of 100 launches, three rounds of
# four variants alternating (bench/ab_on_device.sh): default, the client spinning 50 us at
# most (RGPU_SPIN_US=50), not at all (RGPU_SPIN_US=0), and the whole run on one hardware
# thread per core (taskset).
set -u
N=.carry-new
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
(lscpu; echo; cat /sys/devices/system/cpu/cpu*/topology/thread_siblings_list | paste -sd' ') > $OUT/cpus.txt 2>&1
grep -E 'Model name|Thread|Core|Socket|NUMA node' $OUT/cpus.txt; tail -1 $OUT/cpus.txt
AB_ARGS="--async-rounds 3" timeout 560 bash bench/ab_on_device.sh $N /tmp/ab2 3 100 \
  def= spin50=env:RGPU_SPIN_US=50 spin0=env:RGPU_SPIN_US=0 opc=cpus:onepercore > /dev/null 2>&1
echo "ab rc=$?"; cat /tmp/ab2/summary.md | tee $OUT/ab.md
rm -f /tmp/ab2/*/rgpud-*.log
(cd /tmp && tar czf $OUT/ab2.tar.gz ab2)
