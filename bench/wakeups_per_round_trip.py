#!/usr/bin/python3
"""Sync round trips through rgpu and how often each of the client's threads slept for one.

    OCL_ICD_VENDORS=build/icd RGPU_SERVER=ADDRESS /usr/bin/python3 bench/wakeups_per_round_trip.py [N]

Runs N (default 3000) launches of a one-item kernel, each followed by clFinish, through the
`rgpu` platform (pyopencl), and prints the p50 of a round trip and, per thread of this process
(the ICD's rgpu-receive, rgpu-flush, ...), its voluntary context switches per round trip: a
thread that sleeps and is woken once per round trip reads 1.0. docs/performance.md, "Small
machines" (session 40).
"""
import os
import sys
import time

import pyopencl as cl

from proc_read import read


def switches():
    out = {}
    for tid in os.listdir("/proc/self/task"):
        status = read(f"/proc/self/task/{tid}/status") or ""
        for line in status.splitlines():
            if line.startswith("voluntary_ctxt_switches"):
                out[f"{read(f'/proc/self/task/{tid}/comm')} ({tid})"] = int(line.split()[1])
    return out


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    platform = [p for p in cl.get_platforms() if p.name == "rgpu"][0]
    ctx = cl.Context([platform.get_devices()[0]])
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, "kernel void k(global int* a) { a[get_global_id(0)] += 1; }").build()
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64)
    kernel = prg.k
    kernel.set_arg(0, buf)
    for _ in range(200):
        cl.enqueue_nd_range_kernel(queue, kernel, (1,), None)
        queue.finish()
    before = switches()
    took = []
    for _ in range(n):
        t0 = time.perf_counter()
        cl.enqueue_nd_range_kernel(queue, kernel, (1,), None)
        queue.finish()
        took.append(time.perf_counter() - t0)
    after = switches()
    took.sort()
    print(f"launch+finish p50 {took[len(took) // 2] * 1e6:.1f} us over {n}")
    for name, count in sorted(after.items()):
        print(f"  {name}: {(count - before.get(name, 0)) / n:.3f} sleeps per round trip")


if __name__ == "__main__":
    main()
