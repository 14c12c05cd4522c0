#!/usr/bin/env bash
# Issue 11 on a real GPU: the real programs of tests/apps (clpeak, hashcat, OpenCV's OpenCL
# path) natively on NVIDIA and through rgpud serving NVIDIA, compared as in CI.
#
#   tests/gpu/apps_on_device.sh CARRY OUTDIR [TEST...]
#
# TEST: clinfo clpeak_compute clpeak_transfer hashcat_bench hashcat_crack opencv_umat (default: all;
# a device command has 10 minutes, so a first run may take two calls). Each test is cut at
# APP_TIMEOUT seconds (default 280).
#
# CARRY is made here by tests/gpu/make_apps_carry.sh. Python's cv2 is not carried (Debian's
# is 380 MB with its libraries): the OpenCV test uses the first python that has one ($PYTHON,
# /usr/bin/python3, the GPU image's /opt/torch/.venv), else the same operations through
# OpenCV's C++ API (rgpu-opencv-umat, carried with CARRY_APPS=opencv), and is reported as
# skipped if neither is there. Writes
# OUTDIR/summary.txt and each test's outputs.
set -u
C=$(cd "$1" && pwd)
OUT=$2
shift 2
tests=" ${*:-clpeak_compute clpeak_transfer hashcat_bench hashcat_crack opencv_umat} "
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$C/lib:${LD_LIBRARY_PATH:-}"
. "$here/../../bench/device_vendors.sh"
V=$(device_vendors "$OUT/env.txt")
# APPS_PLATFORM and APPS_ICD_MATCH name another platform (e.g. Portable and pocl, to try the
# script on a machine without a GPU).
platform=${APPS_PLATFORM:-NVIDIA}
device_icd=$(grep -l -i "${APPS_ICD_MATCH:-nvidia}" "$V"/*.icd | head -n1)
[ -n "$device_icd" ] || { echo "no ICD for $platform in $V" | tee "$OUT/summary.txt"; exit 1; }
# The native runs see the device's platform alone, as the rgpu runs see rgpu's alone.
native=$(mktemp -d) && cp "$device_icd" "$native/"
echo "$C/client/librgpu-icd.so" >"$C/icd/rgpu.icd"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat "$C/COMMIT"; } >>"$OUT/env.txt" 2>&1

sock=/tmp/rgpu-apps.sock
rm -f "$sock"  # a warm machine may keep the last run's
OCL_ICD_VENDORS=$V "$C/server/rgpud" --listen "unix:$sock" --platform "$platform" >"$OUT/rgpud.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
export RGPU_SERVER=unix:$sock RGPUD_LOG=$OUT/rgpud.log OCL_ICD_VENDORS=$C/icd NATIVE_VENDORS=$native
export PATH="$C/bin:$C/hashcat:$PATH" OPENCV_OPENCL_DEVICE=${OPENCV_OPENCL_DEVICE:-:GPU:}

summary="$OUT/summary.txt"
: >"$summary"
run_app() {  # NAME SCRIPT ARGS...: the script's outputs under OUT/NAME, one summary line
  local name=$1 rc
  shift
  [[ $tests == *" $name "* ]] || return 0
  APPS_OUT="$OUT/$name" timeout "${APP_TIMEOUT:-280}" "$@" >"$OUT/$name.txt" 2>&1
  rc=$?
  echo "$name: $([ $rc = 0 ] && echo PASS || echo "FAIL (exit $rc)")" | tee -a "$summary"
}
run_app clpeak_compute "$here/../apps/clpeak_test.sh" --global-bandwidth --compute-sp \
  --compute-dp --compute-integer --compute-intfast --kernel-latency
run_app clpeak_transfer "$here/../apps/clpeak_test.sh" --transfer-bandwidth
# clinfo natively and through rgpu, for the OpenCL 3.0 table of docs/architecture.md.
if [[ $tests == *" clinfo "* ]]; then
  OCL_ICD_VENDORS=$native clinfo >"$OUT/clinfo-native.txt" 2>&1
  clinfo >"$OUT/clinfo-rgpu.txt" 2>&1
  echo "clinfo: native $(grep -c . "$OUT/clinfo-native.txt") lines, rgpu $(grep -c . "$OUT/clinfo-rgpu.txt") lines" |
    tee -a "$summary"
fi
run_app hashcat_bench "$here/../apps/hashcat_test.sh" bench 0 1400 3200
run_app hashcat_crack "$here/../apps/hashcat_test.sh" crack
# The first python with cv2: $PYTHON, the system's, or the GPU image's venv (opencv-python-
# headless, which loads the ICD loader it is told of).
cv_python=
for py in ${PYTHON:-} /usr/bin/python3 /opt/torch/.venv/bin/python3 python3; do
  if "$py" -c "import cv2" 2>/dev/null; then cv_python=$py; break; fi
done
if [ -n "$cv_python" ]; then
  PYTHON=$cv_python OPENCV_OPENCL_RUNTIME=${OPENCV_OPENCL_RUNTIME:-$(ls "$C"/lib/libOpenCL.so* 2>/dev/null | head -n1)} \
    run_app opencv_umat "$here/../apps/opencv_test.sh"
  echo "opencv_umat ran with $cv_python: $("$cv_python" -c 'import cv2; print(cv2.__version__)')" | tee -a "$summary"
elif [ -x "$C/bin/rgpu-opencv-umat" ]; then  # no cv2 here: the same operations from C++
  OPENCV_PROGRAM=$C/bin/rgpu-opencv-umat run_app opencv_umat "$here/../apps/opencv_test.sh"
elif [[ $tests == *" opencv_umat "* ]]; then
  echo "opencv_umat: skipped (no cv2 in this host's python3 and no rgpu-opencv-umat carried)" | tee -a "$summary"
fi
kill -TERM $pid
wait $pid
echo "rgpud exit: $?" | tee -a "$summary"
rm -rf "$native"
