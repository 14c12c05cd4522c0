#!/usr/bin/env bash
# Runs the sharing benchmark on a GPU machine from a build made elsewhere and carried in
# (the GPU image lacks spdlog, toml++, prometheus-cpp; see docs/scheduling.md, "Measured").
#
#   bench/sharing_on_device.sh CARRIED_BUILD OUTDIR [rgpu-bench-sharing options...]
#
# The workload matrix of issue 15 (native, fifo, fair; 35 runs each at 2 s, about 5 minutes):
#   bench/sharing_on_device.sh .carry-sharing $OUT/mx --matrix
# and with a policy or rgpud flags under trial:
#   bench/sharing_on_device.sh .carry-sharing $OUT/mx --matrix --modes native,fifo,fair,fair:250 \
#     --rgpud-args "--lc-guard-us 200"
# or against the native runs of an earlier matrix run (its sharing.json copied into the carry):
#   bench/sharing_on_device.sh .carry-sharing $OUT/try --matrix --modes fair,fair/--lc-rhythm=0 \
#     --baseline .carry-sharing/native-sharing.json
# OUTDIR gets sharing.json, sharing.md, progress.txt, device-log.txt and rgpud-logs.tar.gz (every
# mode's rgpud log in one file: the device tool brings back at most 8 files).
#
# CARRIED_BUILD holds bench/ (rgpu-bench-sharing and, for modes cuda and mps, the CUDA tenant
# rgpu-bench-sharing-cuda), server/, client/ like a build tree, plus lib/ with the shared
# libraries the target lacks (and the ocl-icd loader, which honours OCL_ICD_VENDORS; NVIDIA's
# libOpenCL on the image ignores it).
set -uo pipefail
build=$(cd "$1" && pwd)
out=$2
shift 2
mkdir -p "$out"
export LD_LIBRARY_PATH="$build/lib:${LD_LIBRARY_PATH:-}"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,compute_mode --format=csv
  nvidia-smi --query-compute-apps=pid,name --format=csv
  ls -l /etc/OpenCL/vendors && head -n 5 /etc/OpenCL/vendors/*.icd
  command -v nvidia-cuda-mps-control
  [ -e "$build/bench/rgpu-bench-sharing-cuda" ] && ldd "$build/bench/rgpu-bench-sharing-cuda"
  nproc
} >"$out/device-log.txt" 2>&1
. "$(dirname "$0")/device_vendors.sh"
vendors=$(device_vendors "$out/device-log.txt")
"$build/bench/rgpu-bench-sharing" --vendors "$vendors" --build "$build" --out "$out" "$@" \
  2>&1 | tee "$out/progress.txt"
rc=${PIPESTATUS[0]}
if compgen -G "$out/rgpud-*.log" >/dev/null; then
  tar -C "$out" -czf "$out/rgpud-logs.tar.gz" $(cd "$out" && ls rgpud-*.log) && rm -f "$out"/rgpud-*.log
fi
exit "$rc"
