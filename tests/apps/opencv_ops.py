"""OpenCV's OpenCL path (cv2.UMat), unmodified: runs one operation on the default OpenCL
device and saves its result, so that a native run and a run through rgpu can be compared.

    opencv_ops.py run OP OUT.npy     (OP: one of OPS below; `list` prints them)
    opencv_ops.py compare A.npy B.npy

tests/apps/opencv_umat.cpp runs the same operations (and a GEMM) through OpenCV's C++ API,
for hosts without cv2. OPENCV_OPENCL_RAISE_ERROR=1 (set by the caller) turns a failed OpenCL
kernel into an error instead of a quiet fallback to the CPU code."""
import sys

import cv2
import numpy as np


OPS = ["resize_linear", "resize_area", "gaussian_blur", "cvtcolor_gray", "cvtcolor_hsv", "add",
       "multiply", "add_weighted", "absdiff", "transpose", "flip"]


def inputs():
    rng = np.random.default_rng(11)
    bgr = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    other = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    m = rng.random((256, 256), dtype=np.float32)
    return bgr, other, m


def ops():
    bgr, other, m = inputs()
    u, v, um = cv2.UMat(bgr), cv2.UMat(other), cv2.UMat(m)
    table = {
        "resize_linear": lambda: cv2.resize(u, (320, 240), interpolation=cv2.INTER_LINEAR),
        "resize_area": lambda: cv2.resize(u, (160, 120), interpolation=cv2.INTER_AREA),
        "gaussian_blur": lambda: cv2.GaussianBlur(u, (5, 5), 1.5),
        "cvtcolor_gray": lambda: cv2.cvtColor(u, cv2.COLOR_BGR2GRAY),
        "cvtcolor_hsv": lambda: cv2.cvtColor(u, cv2.COLOR_BGR2HSV),
        "add": lambda: cv2.add(u, v),
        "multiply": lambda: cv2.multiply(u, v, scale=1.0 / 255),
        "add_weighted": lambda: cv2.addWeighted(u, 0.3, v, 0.7, 2.0),
        "absdiff": lambda: cv2.absdiff(u, v),
        "transpose": lambda: cv2.transpose(um),
        "flip": lambda: cv2.flip(um, -1),
    }
    assert list(table) == OPS
    return table


def run(op, out):
    cv2.ocl.setUseOpenCL(True)
    if not cv2.ocl.useOpenCL():
        sys.exit("OpenCV has no OpenCL device")
    device = cv2.ocl.Device.getDefault()
    print(f"{op} on {device.name()} ({device.vendorName()}, {device.version()})")
    result = ops()[op]()
    if not isinstance(result, cv2.UMat):
        sys.exit(f"{op} returned {type(result)}, not a UMat")
    cv2.ocl.finish()
    np.save(out, result.get())


def compare(a, b):
    x, y = np.load(a), np.load(b)
    if x.shape != y.shape or x.dtype != y.dtype:
        sys.exit(f"{x.shape} {x.dtype} vs {y.shape} {y.dtype}")
    if not np.array_equal(x, y):
        diff = np.abs(x.astype(np.float64) - y.astype(np.float64))
        sys.exit(f"{np.count_nonzero(diff)} of {diff.size} values differ, by up to {diff.max()}")
    print(f"identical: {x.shape} {x.dtype}")


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "list":  # reads the names only: no OpenCL session for this
        print(" ".join(OPS))
