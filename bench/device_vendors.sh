# Sourced by the scripts that run on a GPU machine (bench/on_device.sh,
# bench/sharing_on_device.sh, tests/gpu/run_on_device.sh).
#
# device_vendors LOG: prints an OpenCL vendors directory with the system's .icd files and,
# where the image has NVIDIA's OpenCL library but no vendors file for it (as the device
# tool's image does), one more naming it; says what it wrote in LOG.
device_vendors() {
  local log=$1 lib dir
  if grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
    echo /etc/OpenCL/vendors
    return
  fi
  lib=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
  [ -n "$lib" ] || lib=$(find /usr/lib /usr/lib64 /usr/local /opt -name 'libnvidia-opencl.so.1*' 2>/dev/null | head -1)
  dir=$(mktemp -d)
  cp /etc/OpenCL/vendors/*.icd "$dir/" 2>/dev/null
  [ -n "$lib" ] && echo "$lib" >"$dir/nvidia.icd"
  echo "wrote $dir/nvidia.icd -> ${lib:-(not found)}" >>"$log"
  echo "$dir"
}
