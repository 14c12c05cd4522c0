#!/usr/bin/env bash
# Runs the overhead benchmark on a GPU machine from a build made elsewhere and carried in
# (the GPU image has no spdlog; see docs/performance.md, "Reproducing").
#
#   bench/on_device.sh CARRIED_BUILD OUTDIR [rgpu-bench-overhead options...]
#
# CARRIED_BUILD holds bench/, server/, client/, icd/ like a build tree, plus lib/ with the
# shared libraries the target lacks (libspdlog, libfmt, the ICD loader).
set -uo pipefail
build=$(cd "$1" && pwd)
out=$2
shift 2
mkdir -p "$out"
export LD_LIBRARY_PATH="$build/lib:${LD_LIBRARY_PATH:-}"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  ls -l /etc/OpenCL/vendors && head -n 5 /etc/OpenCL/vendors/*.icd
  nproc
} >"$out/device-log.txt" 2>&1
. "$(dirname "$0")/device_vendors.sh"
vendors=$(device_vendors "$out/device-log.txt")
"$build/bench/rgpu-bench-overhead" --vendors "$vendors" --build "$build" --out "$out" "$@" \
  2>&1 | tee "$out/progress.txt"
