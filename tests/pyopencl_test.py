"""A pyopencl program through rgpu: pyopencl walks many API paths of its own (device
queries, program caching via binaries, kernel argument handling, event waits)."""
import sys

import numpy as np
import pyopencl as cl

platform = [p for p in cl.get_platforms() if p.name == "rgpu"]
if not platform:
    sys.exit("no rgpu platform")
device = platform[0].get_devices()[0]
ctx = cl.Context([device])
queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
prg = cl.Program(ctx, """
__kernel void saxpy(float a, __global const float* x, __global float* y) {
  int i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}
""").build()
n = 1 << 16
x = np.random.rand(n).astype(np.float32)
y = np.random.rand(n).astype(np.float32)
expect = 2.5 * x + y
mf = cl.mem_flags
dx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
dy = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
ev = prg.saxpy(queue, (n,), None, np.float32(2.5), dx, dy)
ev.wait()
out = np.empty_like(y)
cl.enqueue_copy(queue, out, dy)
assert np.allclose(out, expect), "wrong saxpy result"
assert ev.profile.end >= ev.profile.start
print(f"pyopencl on {device.name} via {platform[0].name}: OK ({n} elements)")
