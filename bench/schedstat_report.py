#!/usr/bin/env python3
"""Each thread's CPU and run-queue wait from bench/schedstat_sample.py's file.

    bench/schedstat_report.py SAMPLES.tsv [MIN_CPU_PERCENT]

One line per thread that used at least MIN_CPU_PERCENT (default 5) of a CPU over its sampled
life: process and thread name, ids, when it was first and last seen (seconds from the first
sample), CPU %, run-queue wait % (of wall time), and the mean wait per time it ran (µs): how long
a woken thread waited for a CPU.
"""
import sys
from collections import OrderedDict


def main():
    path = sys.argv[1]
    min_cpu = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
    first = OrderedDict()
    last = {}
    t0 = None
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 8:
                continue
            t, pid, tid, pname, tname = float(parts[0]), parts[1], parts[2], parts[3], parts[4]
            run, wait, slices = int(parts[5]), int(parts[6]), int(parts[7])
            t0 = t if t0 is None else t0
            key = (pid, tid)
            if key not in first:
                first[key] = (t, pname, tname, run, wait, slices)
            last[key] = (t, tname, run, wait, slices)
    print(f"{'process':15} {'thread':15} {'pid':>7} {'tid':>7} {'from':>6} {'to':>6} "
          f"{'cpu%':>6} {'wait%':>6} {'wait/run us':>11}")
    for key, (ta, pname, _, ra, wa, sa) in first.items():
        tb, tname, rb, wb, sb = last[key]
        span = tb - ta
        if span <= 0:
            continue
        cpu = 100.0 * (rb - ra) / 1e9 / span
        if cpu < min_cpu:
            continue
        waitp = 100.0 * (wb - wa) / 1e9 / span
        per = (wb - wa) / 1e3 / max(1, sb - sa)
        print(f"{pname:15} {tname:15} {key[0]:>7} {key[1]:>7} {ta - t0:6.1f} {tb - t0:6.1f} "
              f"{cpu:6.1f} {waitp:6.1f} {per:11.1f}")


if __name__ == "__main__":
    main()
