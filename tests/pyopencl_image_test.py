"""pyopencl's image path through rgpu: cl.Image from numpy, a sampler made by pyopencl, a
kernel sampling with linear filtering, cl.enqueue_copy of image regions. The same program runs
on the native platform; the outputs must be equal bit for bit."""
import atexit
import os
import shutil
import sys
import tempfile

# Before the loader starts: a vendors directory with rgpu's ICD and the native one, so that
# both platforms are listed (RGPU_TEST_NATIVE_ICD names the native .icd file).
if os.environ.get("RGPU_TEST_NATIVE_ICD") and os.environ.get("OCL_ICD_VENDORS"):
    vendors = tempfile.mkdtemp(prefix="rgpu-pyimg-icd-")
    atexit.register(shutil.rmtree, vendors, True)
    for name in os.listdir(os.environ["OCL_ICD_VENDORS"]):
        shutil.copy(os.path.join(os.environ["OCL_ICD_VENDORS"], name), vendors)
    shutil.copy(os.environ["RGPU_TEST_NATIVE_ICD"], vendors)
    os.environ["OCL_ICD_VENDORS"] = vendors

import numpy as np  # noqa: E402
import pyopencl as cl  # noqa: E402

SRC = """
__kernel void blur(read_only image2d_t im, sampler_t s, __global float4* out, int w) {
  int x = get_global_id(0), y = get_global_id(1);
  float2 c = (float2)((x + 0.25f) / w, (y + 0.75f) / get_global_size(1));
  out[y * w + x] = read_imagef(im, s, c);
}
__kernel void flip(read_only image2d_t in, write_only image2d_t out) {
  int2 p = (int2)(get_global_id(0), get_global_id(1));
  write_imageui(out, (int2)(get_image_width(in) - 1 - p.x, p.y), read_imageui(in, p));
}
"""


def run(platform):
    device = platform.get_devices()[0]
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SRC).build()
    h, w = 24, 33
    rng = np.random.default_rng(7)
    rgba = rng.integers(0, 256, size=(h, w, 4), dtype=np.uint8)
    mf = cl.mem_flags
    fmt = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.UNORM_INT8)
    im = cl.Image(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, fmt, shape=(w, h), hostbuf=rgba)
    sampler = cl.Sampler(ctx, True, cl.addressing_mode.CLAMP_TO_EDGE, cl.filter_mode.LINEAR)
    out = cl.Buffer(ctx, mf.WRITE_ONLY, w * h * 16)
    prg.blur(queue, (w, h), None, im, sampler, out, np.int32(w))
    blurred = np.empty((h, w, 4), np.float32)
    cl.enqueue_copy(queue, blurred, out)
    ufmt = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.UNSIGNED_INT8)
    src = cl.image_from_array(ctx, rgba, 4)
    dst = cl.Image(ctx, mf.WRITE_ONLY, ufmt, shape=(w, h))
    prg.flip(queue, (w, h), None, src, dst)
    flipped = np.empty_like(rgba)
    cl.enqueue_copy(queue, flipped, dst, origin=(0, 0), region=(w, h))
    assert (flipped == rgba[:, ::-1, :]).all(), "flip is wrong"
    formats = sorted((f.channel_order, f.channel_data_type)
                     for f in cl.get_supported_image_formats(ctx, mf.READ_WRITE, cl.mem_object_type.IMAGE2D))
    return blurred, flipped, formats


platforms = {p.name: p for p in cl.get_platforms()}
if "rgpu" not in platforms:
    sys.exit("no rgpu platform")
native = [p for n, p in platforms.items() if "Portable" in n or n == os.environ.get("RGPU_TEST_NATIVE_PLATFORM")]
got = run(platforms["rgpu"])
if native:
    want = run(native[0])
    assert got[0].tobytes() == want[0].tobytes(), "sampled image differs from the device's"
    assert (got[1] == want[1]).all() and got[2] == want[2], "images or formats differ"
print(f"pyopencl images via rgpu: OK ({len(got[2])} formats{', equal to native' if native else ''})")
