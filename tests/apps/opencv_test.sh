#!/usr/bin/env bash
# OpenCV's OpenCL path from Python (cv2.UMat), unmodified, natively and through rgpud: each
# operation of tests/apps/opencv_ops.py runs in its own process on each side, the results
# must be identical, and rgpud must have run kernels for each of them (so that a quiet
# fallback to OpenCV's CPU code cannot pass).
#
#   opencv_test.sh [OP...]     (default: every operation)
#
# OPENCV_PROGRAM=PATH runs the same operations through OpenCV's C++ API instead
# (tests/apps/opencv_umat.cpp, built as rgpu-opencv-umat where libopencv-imgproc-dev is
# installed): the library code cv2 binds, for hosts without cv2.
#
# OPENCV_OPENCL_DEVICE picks the device (":CPU:" for PoCL, the default; ":GPU:" on a GPU
# host). Run under tests/with_rgpud.sh or tests/gpu/apps_on_device.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
python=${PYTHON:-/usr/bin/python3}
export OPENCV_OPENCL_DEVICE=${OPENCV_OPENCL_DEVICE:-:CPU:} OPENCV_OPENCL_RAISE_ERROR=1
if [ -n "${OPENCV_PROGRAM:-}" ]; then
  ops_cmd=("$OPENCV_PROGRAM") ext=bin
else
  ops_cmd=("$python" "$here/opencv_ops.py") ext=npy
fi
ops=("$@")
[ ${#ops[@]} -gt 0 ] || read -ra ops <<<"$("${ops_cmd[@]}" list)"
for op in "${ops[@]}"; do
  native "${ops_cmd[@]}" run "$op" "$APPS_OUT/$op-native.$ext" >"$APPS_OUT/$op-native.txt" 2>&1 ||
    { fail "$op natively"; cat "$APPS_OUT/$op-native.txt"; continue; }
  run_through_rgpu_counted "$APPS_OUT/$op-rgpu.txt" "${ops_cmd[@]}" run "$op" "$APPS_OUT/$op-rgpu.$ext"
  [ "$RGPU_RC" = 0 ] || { fail "$op through rgpu"; cat "$APPS_OUT/$op-rgpu.txt"; continue; }
  verdict=$("${ops_cmd[@]}" compare "$APPS_OUT/$op-native.$ext" "$APPS_OUT/$op-rgpu.$ext" 2>&1) ||
    fail "$op: results differ: $verdict"
  echo "$op: $(head -n1 "$APPS_OUT/$op-rgpu.txt"); $RGPU_LAUNCHES launches through rgpu; $verdict"
  [ "${RGPU_LAUNCHES:-0}" -gt 0 ] || fail "$op: rgpud ran no kernel (OpenCV fell back to its CPU code)"
done
finish
