#!/usr/bin/env python3
"""Samples the scheduler statistics of every thread of rgpud and of rgpu's clients.

    bench/schedstat_sample.py OUT.tsv [SECONDS] [INTERVAL]

Every INTERVAL seconds (default 0.25) for SECONDS (default 60) it appends, for each thread of
each process whose name begins with "rgpu", one line: time, pid, tid, process name, thread name,
and /proc/PID/task/TID/schedstat's three figures (ns on a CPU, ns waiting on a run queue,
times run). bench/schedstat_report.py turns the file into each thread kind's CPU and wait.
"""
import os
import sys
import time

from proc_read import read


def sample(out):
    now = time.monotonic()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        pname = read(f"/proc/{pid}/comm")
        if not pname or not pname.startswith("rgpu"):
            continue
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            stat = read(f"/proc/{pid}/task/{tid}/schedstat")
            tname = read(f"/proc/{pid}/task/{tid}/comm")
            if stat and tname:
                out.write(f"{now:.4f}\t{pid}\t{tid}\t{pname}\t{tname}\t{stat.replace(' ', chr(9))}\n")


def main():
    path = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 0.25
    end = time.monotonic() + seconds
    with open(path, "a") as out:
        while time.monotonic() < end:
            sample(out)
            out.flush()
            time.sleep(interval)


if __name__ == "__main__":
    main()
