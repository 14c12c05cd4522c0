#!/usr/bin/env bash
# Builds the lab and runs scenarios on a GPU machine in one go (the device
# tool gives a bare machine per call, and every minute of it counts).
#
#   lab/tools/on_device.sh OUTDIR STEP...
#
# Each STEP is "SCENARIO:MODE[:extra rgpu-lab options, comma-separated[:TAG]]",
# e.g. "seed000-persistent:mps", "seed001-cpu-tenants:opencl:--cl-platform=NVIDIA" or
# "seed000-tables1-2:rgpu:--policy=fair,--context-group" (options take the --key=value form).
# Results land in OUTDIR/SCENARIO[-TAG]/MODE/; OUTDIR/device-log.txt has the setup.
#
# rgpu mode needs rgpud and the rgpu ICD. The GPU image lacks the server's
# build dependencies, so they travel prebuilt in $LAB_CARRY (default
# .carry-lab/: rgpud, librgpu-icd.so, and lib/ with the shared libraries they
# need plus ocl-icd's libOpenCL.so.1; docs/lab.md "On a GPU machine" says how
# to fill it). Only rgpu steps get lib/ first on LD_LIBRARY_PATH: NVIDIA's
# libOpenCL.so.1 (first on the image's path) ignores OCL_ICD_VENDORS, ocl-icd's
# honours it. rgpud then sees only NVIDIA's ICD (written here if the image has
# the library but no vendors file), the workers only the rgpu ICD. The vendors
# files are written here because they name libraries by their path on this
# machine.
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

carry=${LAB_CARRY:-.carry-lab}
rgpu_env=()
if [ -d "$carry" ]; then
  carry=$(cd "$carry" && pwd)
  mkdir -p "$carry/icd"
  echo "$carry/librgpu-icd.so" >"$carry/icd/rgpu.icd"
  backend_vendors=/etc/OpenCL/vendors
  nvidia_lib=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
  if [ -n "$nvidia_lib" ]; then
    backend_vendors=$(mktemp -d /tmp/rgpu-lab-vendors-XXXXXX)
    echo "$nvidia_lib" >"$backend_vendors/nvidia.icd"
  fi
  rgpu_env=("LD_LIBRARY_PATH=$carry/lib:$LD_LIBRARY_PATH" "OCL_ICD_VENDORS=$backend_vendors")
  {
    echo "rgpu carry: $carry; rgpud's vendors: $backend_vendors ($(cat "$backend_vendors"/*.icd 2>/dev/null | tr '\n' ' '))"
    env "${rgpu_env[@]}" ldd "$carry/rgpud" | grep -E 'not found|OpenCL|spdlog|toml'
  } >>"$log" 2>&1
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
  # rgpu runs land in rgpu[-POLICY][-group]/ (the runner's rule: --policy=POLICY,
  # --context-group); so do their logs.
  label=$mode step_env=()
  if [ "$mode" = rgpu ]; then
    policy="" group=""
    for o in "${opts[@]}"; do
      case $o in
        --policy=*) policy=-${o#--policy=} ;;
        --context-group) group=-group ;;
      esac
    done
    label=$mode$policy$group
    if [ ${#rgpu_env[@]} -eq 0 ]; then echo "== skipped (no $carry): $step" | tee -a "$log"; continue; fi
    step_env=("${rgpu_env[@]}")
    opts+=("--rgpu-build=$carry")
  fi
  progress="$out/$scenario${tag:+-$tag}-$label.progress.txt"
  echo "== $scenario / $label ${opts[*]:-}" | tee -a "$log"
  t0=$(date +%s)
  env "${step_env[@]}" timeout "$step_limit" ./build-lab/rgpu-lab run "lab/scenarios/$scenario.toml" \
      --mode "$mode" --out "$out/$scenario${tag:+-$tag}" "${opts[@]}" 2>>"$progress"
  echo "   rc=$? in $(( $(date +%s) - t0 )) s" | tee -a "$log"
  grep -v 'round [0-9]*/' "$progress" | tail -40
done
