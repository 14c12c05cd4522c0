#!/usr/bin/env bash
# Two programs, one rgpud with two GPUs, a pool in etcd: shows that rgpud serves both GPUs,
# that the second program is placed on the other GPU (the first one is busy), and each
# device's load in the pool record. Runs on the GPU machine from a carried stage
# (bench/pool_stage.sh); writes OUTDIR/{summary.txt,status-*.txt,*.log}.
#
#   bench/pool_on_device.sh CARRY_DIR OUTDIR [WORK_ITEMS]
set -uo pipefail
carry=$(cd "$1" && pwd)
out=$2
items=${3:-1048576}
mkdir -p "$out"
export LD_LIBRARY_PATH="$carry/lib:${LD_LIBRARY_PATH:-}"
dir=$(mktemp -d)
pids=()
trap 'touch "$dir/stop"; for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait; rm -rf "$dir"' EXIT
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv
} >"$out/device-log.txt" 2>&1
. "$(dirname "$0")/device_vendors.sh"
vendors=$(device_vendors "$out/device-log.txt")

port=23790
"$carry/bin/etcd" --data-dir "$dir/etcd" --listen-client-urls http://127.0.0.1:$port \
  --advertise-client-urls http://127.0.0.1:$port --listen-peer-urls http://127.0.0.1:23800 \
  --initial-advertise-peer-urls http://127.0.0.1:23800 --initial-cluster default=http://127.0.0.1:23800 \
  >"$out/etcd.log" 2>&1 &
pids+=($!)
sleep 2
url="etcd://127.0.0.1:$port/gpus"
OCL_ICD_VENDORS=$vendors "$carry/server/rgpud" --listen 127.0.0.1:7420 --name gpu-host --pool "$url" \
  >"$out/rgpud.log" 2>&1 &
pids+=($!)
status() { "$carry/cli/rgpu" status --pool "$url"; }
for _ in $(seq 50); do status 2>/dev/null | grep -q ' 1 servers' && break; sleep 0.2; done
status >"$out/status-0-idle.txt" 2>&1

mkdir -p "$dir/icd"
echo "$carry/client/librgpu-icd.so" >"$dir/icd/rgpu.icd"
export OCL_ICD_VENDORS="$dir/icd" RGPU_SERVER="$url"
"$carry/tests/pool_client" "$dir/stop" 120 "$items" >"$out/program-A.log" 2>&1 &
pids+=($!)
sleep 6  # A runs; the record shows its queue and its device's busy fraction
status >"$out/status-1-after-A.txt" 2>&1
"$carry/tests/pool_client" "$dir/stop" 120 "$items" >"$out/program-B.log" 2>&1 &
pids+=($!)
sleep 8
status >"$out/status-2-after-B.txt" 2>&1
nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv >"$out/nvidia-smi-apps.txt" 2>&1
touch "$dir/stop"
sleep 2

# Devices table rows: PLACE SERVER ADDRESS DEV BUSY% QUEUES ...
busy_devices=$(awk '$1 ~ /^[0-9]+$/ && NF >= 7 && $6 >= 1 {print $4}' "$out/status-2-after-B.txt" | sort -u | wc -l)
listed=$(awk '$1 ~ /^[0-9]+$/ && NF >= 7' "$out/status-2-after-B.txt" | wc -l)
{
  echo "devices in the pool record: $listed"
  echo "devices with a program's queue: $busy_devices"
  cat "$out/status-2-after-B.txt"
  tail -n 1 "$out/program-A.log" "$out/program-B.log"
  if [ "$listed" -ge 2 ] && [ "$busy_devices" -ge 2 ]; then echo "PASS: two programs on two GPUs"; else echo "FAIL"; fi
} | tee "$out/summary.txt"
