#!/usr/bin/env python3
"""Where a held launch that goes on the device at once spends rgpud's time (Scheduler::Hold,
LaunchAtOnce): reads rgpud's request stamps (proto/stamps.h) and prints p50 / p90 / p99 of
each step between a launch frame's kSubmit and kSubmitted, in microseconds, for the launches
that went at once.

    RGPU_STAMPS=/tmp/st/s bench/sharing_on_device.sh ... --scenarios mx_poisson_370_tiny ...
    bench/stamps_held.py SERVER_FILE

The scheduler's marks carry no session; only held launches make them, so each is given to
the one launch frame being submitted then (frames of two sessions submitted at once are
left out).

With --direct, the same for direct launches (Scheduler::Direct): Submit's own work, the event
chosen under the scheduler's lock, the driver's enqueue, and what follows it.

    bench/stamps_held.py --direct SERVER_FILE
"""
import sys

SUBMIT, SUBMITTED = 17, 18
STEPS = [(26, "Submit's own work, to Hold"), (27, "Hold: planned, the launch before found"),
         (28, "TakeAtOnce (under the scheduler's lock)"), (29, "KeepNamed: retains"),
         (30, "the driver's enqueue"), (31, "retain, the driver's flush"),
         (32, "retain, Launched, to the completion watcher")]
DIRECT_STEPS = [(33, "Submit's own work (its lock), to Direct"),
                (34, "ChooseEvent (under the scheduler's lock)"),
                (35, "the driver's enqueue (or handed to the launch thread)")]


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))] if v else float("nan")


def main():
    direct = sys.argv[1] == "--direct"
    steps = DIRECT_STEPS if direct else STEPS
    lo, hi = steps[0][0], steps[-1][0]
    stamps = sorted((tuple(int(x) for x in line.split()) for line in open(sys.argv[-1])),
                    key=lambda s: s[2])
    open_ = {}  # session -> [submit ns, [(point, ns)]]
    done = []
    for point, arg, ns in stamps:
        if point == SUBMIT:
            open_[arg >> 20] = [ns, []]
        elif point == SUBMITTED:
            o = open_.pop(arg >> 20, None)
            if o and o[1]:
                done.append((o[0], o[1], ns))
        elif lo <= point <= hi and len(open_) == 1:
            next(iter(open_.values()))[1].append((point, ns))
    rows = {p: [] for p, _ in steps}
    rows["end"] = []
    total = []
    for t0, marks, t1 in done:
        if [p for p, _ in marks] != [p for p, _ in steps]:
            continue
        prev = t0
        for p, ns in marks:
            rows[p].append((ns - prev) / 1e3)
            prev = ns
        rows["end"].append((t1 - prev) / 1e3)
        total.append((t1 - t0) / 1e3)
    kind = "direct launches" if direct else "launches at once"
    print(f"{len(total)} {kind} (of {len(done)} launch frames with such marks)\n")
    print("| step | p50 | p90 | p99 |\n|---|---:|---:|---:|")
    for p, name in steps + [("end", "back in the session (kSubmitted)")]:
        v = rows[p]
        print(f"| {name} | {pct(v, 50):.1f} | {pct(v, 90):.1f} | {pct(v, 99):.1f} |")
    print(f"| **kSubmit to kSubmitted** | {pct(total, 50):.1f} | {pct(total, 90):.1f} | {pct(total, 99):.1f} |")


if __name__ == "__main__":
    main()
