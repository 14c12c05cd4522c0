#!/usr/bin/env bash
# Builds the lab and runs scenarios on a GPU machine in one go (the device
# tool gives a bare machine per call, and every minute of it counts).
#
#   lab/tools/on_device.sh OUTDIR STEP...
#
# Each STEP is "SCENARIO:MODE[:extra rgpu-lab options, comma-separated[:TAG]]",
# e.g. "seed000-persistent:mps" or "seed001-cpu-tenants:opencl:--cl-platform=NVIDIA".
# Results land in OUTDIR/SCENARIO[-TAG]/MODE/; OUTDIR/device-log.txt has the setup.
#
# rgpu mode needs rgpud and the rgpu ICD. The GPU image lacks the server's
# build dependencies, so they can travel prebuilt in .lab-rgpu/ (rgpud,
# librgpu-icd.so, lib/ with the shared libraries they need); the vendors file
# is written here because it must name the ICD by its path on this machine.
set -uo pipefail
out=$1; shift
mkdir -p "$out"
log="$out/device-log.txt"
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}

{
  echo "== $(date -u +%FT%TZ) $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.max.sm,memory.total --format=csv
  nvcc --version | tail -1
  ls /etc/OpenCL/vendors 2>&1
  nproc
} >>"$log" 2>&1

if [ -d .lab-rgpu ]; then
  mkdir -p .lab-rgpu/icd
  echo "$here/.lab-rgpu/librgpu-icd.so" >.lab-rgpu/icd/rgpu.icd
  export LD_LIBRARY_PATH=$here/.lab-rgpu/lib:$LD_LIBRARY_PATH
fi

# Headers the GPU image may lack travel in .lab-deps/include (see docs/lab.md).
extra=("-DRGPU_LAB_GIT_COMMIT_OVERRIDE=${LAB_COMMIT:-}")  # the copy there has no .git
[ -d .lab-deps/include ] && extra+=("-DCMAKE_INCLUDE_PATH=$here/.lab-deps/include")
start=$(date +%s)
if ! { cmake -S lab -B build-lab -DCMAKE_BUILD_TYPE=Release "${extra[@]}" &&
       cmake --build build-lab -j"$(nproc)" --target rgpu-lab-all; } >>"$log" 2>&1; then
  echo "BUILD FAILED; see $log"; tail -30 "$log"; exit 1
fi
echo "build: $(( $(date +%s) - start )) s" | tee -a "$log"

# The whole run must end inside the device call's limit with time left to
# pack the results: each step gets what is left of TOTAL_BUDGET, at most
# STEP_TIMEOUT. Results are written after every config, so a step cut short
# still leaves its finished configs.
deadline=$(( $(date +%s) + ${TOTAL_BUDGET:-540} ))
for step in "$@"; do
  left=$(( deadline - $(date +%s) ))
  if [ "$left" -lt 20 ]; then echo "== skipped (out of time): $step" | tee -a "$log"; continue; fi
  step_limit=$(( left < ${STEP_TIMEOUT:-400} ? left : ${STEP_TIMEOUT:-400} ))
  IFS=: read -r scenario mode options tag <<<"$step"
  IFS=, read -ra opts <<<"${options:-}"
  echo "== $scenario / $mode ${opts[*]:-}" | tee -a "$log"
  t0=$(date +%s)
  timeout "$step_limit" ./build-lab/rgpu-lab run "lab/scenarios/$scenario.toml" --mode "$mode" --out "$out/$scenario${tag:+-$tag}" \
      "${opts[@]}" 2>>"$out/$scenario${tag:+-$tag}-$mode.progress.txt"
  echo "   rc=$? in $(( $(date +%s) - t0 )) s" | tee -a "$log"
  grep -v 'round [0-9]*/' "$out/$scenario${tag:+-$tag}-$mode.progress.txt" | tail -40
done
