#!/usr/bin/env bash
# Session 43, call 4 (carry as call 2): call 3 found rgpud's driver enqueue of the LC kernel at
# about 10-17 or about 35 µs at p50 from one rgpud process to the next, in every mode. Is it
# where the process runs? The host's CPU/NUMA layout and the GPU's, then the periodic 370 µs LC
# alone under `fair` with the whole benchmark (client and rgpud) held to each half of the CPUs
# by taskset, alternating, with request stamps.
set -u
nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader | tee $OUT/gpu.txt
{ lscpu; numactl -H 2>&1 | head -20; nvidia-smi topo -m; 
  for d in /sys/bus/pci/devices/*; do
    [ "$(cat $d/vendor 2>/dev/null)" = 0x10de ] && echo "$d numa_node=$(cat $d/numa_node) local_cpulist=$(cat $d/local_cpulist) class=$(cat $d/class)"; done
  cat /sys/fs/cgroup/cpuset.cpus.effective 2>/dev/null; taskset -p $$; } > $OUT/topo.txt 2>&1
cat $OUT/topo.txt | grep -iE "numa|cpu\(s\)|socket|affinity|GPU0|local_cpulist|model name|current affinity" | head -30
n=$(nproc); h=$((n/2))
W=/tmp/c4 && rm -rf $W && mkdir -p $W
for round in 1 2 3; do
  for half in lo hi; do
    if [ $half = lo ]; then cpus=0-$((h-1)); else cpus=$h-$((n-1)); fi
    tag=$half-$round
    mkdir -p $W/st-$tag
    RGPU_STAMPS=$W/st-$tag/s timeout 100 taskset -c $cpus bash bench/sharing_on_device.sh .carry-new $W/$tag --matrix \
      --modes fair --scenarios mx_lc_periodic_370 --baseline .carry-new/native-matrix.json \
      --duration 2.5 --timeout 25 > $W/$tag.log 2>&1
    echo "== $tag cpus $cpus rc=$? $(grep -E '^\| `mx_lc' $W/$tag/sharing.md | head -1)"
    srv=$(grep -l '^13 ' $W/st-$tag/s.* | head -1)
    cli=$(grep -L '^13 ' $W/st-$tag/s.* | xargs grep -l '^1 ' | tail -1)
    python3 bench/stamps.py $cli $srv 600 | grep -E "driver enqueue|TOTAL|launch call  "
  done
done 2>&1 | tee $OUT/halves.txt
