#!/usr/bin/env python3
"""What each thread of a process is doing, sampled: how often it was running in user space,
and in which system calls it was found otherwise (/proc/PID/task/TID/syscall: the number and
first argument) with its kernel wait channel.

    bench/thread_syscalls.py PROCESS_NAME [SAMPLES] [INTERVAL_S] [MIN_THREADS]

Waits for a process of that name with at least MIN_THREADS threads (default 30: rgpud on a
GPU with four tenants), then samples
SAMPLES times (default 400) every INTERVAL_S (default 0.005) and prints, per thread seen
running or in a call in at least a tenth of the samples, the name and the most frequent
states (syscall numbers are x86-64's: 7 poll, 16 ioctl, 24 sched_yield, 202 futex, 232
epoll_wait, 270 pselect6, 271 ppoll)."""
import collections
import os
import sys
import time

from proc_read import read


def main():
    name = sys.argv[1]
    samples = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 0.005
    min_threads = int(sys.argv[4]) if len(sys.argv) > 4 else 30
    pid = None
    for _ in range(600):
        for p in os.listdir("/proc"):
            if p.isdigit() and read(f"/proc/{p}/comm") == name and len(os.listdir(f"/proc/{p}/task")) >= min_threads:
                pid = p
        if pid:
            break
        time.sleep(0.1)
    if not pid:
        sys.exit(f"no {name} with {min_threads} threads")
    time.sleep(1.0)
    seen = collections.defaultdict(collections.Counter)
    names = {}
    for _ in range(samples):
        for tid in os.listdir(f"/proc/{pid}/task"):
            sc = read(f"/proc/{pid}/task/{tid}/syscall")
            if sc is None:
                continue
            stat = read(f"/proc/{pid}/task/{tid}/stat") or ""
            state = stat[stat.rfind(")") + 2:][:1] if ")" in stat else "?"
            names[tid] = read(f"/proc/{pid}/task/{tid}/comm") or "?"
            f = sc.split()
            if f[0] == "running":
                key = "user (running)"
            else:
                wchan = read(f"/proc/{pid}/task/{tid}/wchan") or ""
                key = f"syscall {f[0]} arg0 {f[1] if len(f) > 1 else ''} state {state} wchan {wchan}"
            seen[tid][key] += 1
        time.sleep(interval)
    for tid, c in sorted(seen.items(), key=lambda kv: int(kv[0])):
        busy = sum(n for k, n in c.items() if k.startswith("user") or " state R" in k)
        if busy < samples / 10:
            continue
        top = ", ".join(f"{k}: {n}" for k, n in c.most_common(4))
        print(f"{tid} {names[tid]}: {busy}/{samples} running; {top}")


if __name__ == "__main__":
    main()
