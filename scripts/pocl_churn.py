"""PoCL alone, no rgpu: what one process's memory does when contexts come and go as they do
inside rgpud under the vanishing-clients stress. Each "session" is a new thread that makes a
context, a profiling queue, builds examples/matmul's kernel, runs it 1-4 times at a random
size (64..320) with fresh buffers, reads the result, and releases everything; CONCURRENCY
sessions at a time, SESSIONS per round. The heap is set up as rgpud sets it
(server/heap_trimmer.h: 2 arenas, 128 KiB mmap threshold) and trimmed after each round, so
that what still grows is PoCL's.

    /usr/bin/python3 scripts/pocl_churn.py [ROUNDS] [SESSIONS] [CONCURRENCY]   (20 60 8)

Prints per round: resident KiB, heap allocated KiB (mallinfo2), PoCL kernel libraries mapped."""
import ctypes
import random
import sys
import threading

libc = ctypes.CDLL("libc.so.6")
libc.mallopt(-8, 2)            # M_ARENA_MAX, before any thread starts
libc.mallopt(-3, 128 << 10)    # M_MMAP_THRESHOLD

import numpy as np              # noqa: E402  (after the heap settings)
import pyopencl as cl           # noqa: E402

SOURCE = """
__kernel void matmul(__global const float* a, __global const float* b, __global float* c,
                     const int n) {
  const int row = get_global_id(1), col = get_global_id(0);
  if (row >= n || col >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}
"""


class MallInfo2(ctypes.Structure):
    _fields_ = [(f, ctypes.c_size_t) for f in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]


libc.mallinfo2.restype = MallInfo2


def session(device):
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    kernel = cl.Program(ctx, SOURCE).build().matmul
    n = random.randint(1, 5) * 64
    for _ in range(random.randint(1, 4)):
        a = np.random.rand(n, n).astype(np.float32)
        mf = cl.mem_flags
        da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
        db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
        dc = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
        kernel(queue, (n, n), None, da, db, dc, np.int32(n)).wait()
        c = np.empty_like(a)
        cl.enqueue_copy(queue, c, dc)
        for m in (da, db, dc):
            m.release()
    queue.finish()
    del kernel, queue, ctx


def status():
    rss = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmRSS:"))
    mi = libc.mallinfo2()
    kcache = sum(1 for l in open("/proc/self/maps") if "kcache" in l)
    return rss, (mi.uordblks + mi.hblkhd) >> 10, kcache


def main():
    rounds, sessions, concurrency = (int(a) for a in (sys.argv[1:] + ["20", "60", "8"][len(sys.argv[1:]):]))
    device = [p for p in cl.get_platforms() if "Portable" in p.name][0].get_devices()[0]
    for r in range(1, rounds + 1):
        left = sessions
        while left:
            batch = [threading.Thread(target=session, args=(device,)) for _ in range(min(concurrency, left))]
            for t in batch:
                t.start()
            for t in batch:
                t.join()
            left -= len(batch)
        libc.malloc_trim(0)
        rss, heap, kcache = status()
        print(f"round {r}: VmRSS {rss} KiB, heap allocated {heap} KiB, {kcache} kernel-library mappings",
              flush=True)


main()
