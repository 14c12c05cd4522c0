#!/usr/bin/env python3
"""How closed loops of equal tenants take turns on the device, from their clients' request
stamps (proto/stamps.h): each tenant's clWaitForEvents returns (point 21) merged into one
timeline over the span where every tenant runs.

    RGPU_STAMPS=/tmp/st/s bench/sharing_on_device.sh ... --scenarios mx_equal4_tiny ...
    bench/stamps_turns.py /tmp/st/s.*

A turn here is a maximal run of one tenant's completions in that timeline. Prints the turns'
count and length, the completions per turn, the time from one tenant's last completion to the
next tenant's first (the change of turn), and the gap between completions within a turn (p50,
µs), and what share of the span went to changes of turn: with kernels of fixed length, the
share of the device a change of turn costs (files with fewer than 200 completions, rgpud's
and the benchmark's own, are skipped)."""
import sys

WAIT_RETURNS = 21


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))] if v else float("nan")


def main():
    tenants = []
    for path in sys.argv[1:]:
        t = [int(line.split()[2]) for line in open(path) if line.startswith(f"{WAIT_RETURNS} ")]
        if len(t) >= 200:
            tenants.append(sorted(t))
    if not tenants:
        sys.exit("no tenant with 200 completions")
    # Drop each tenant's first 5% of completions (warm-up, the start), then keep the span where all run.
    lo = max(t[len(t) // 20] for t in tenants)
    hi = min(t[-1] for t in tenants)
    events = sorted((ns, i) for i, t in enumerate(tenants) for ns in t if lo <= ns <= hi)
    turns, within, changes = [], [], []
    start, count = events[0], 1
    for prev, cur in zip(events, events[1:]):
        if cur[1] == prev[1]:
            within.append((cur[0] - prev[0]) / 1e3)
            count += 1
        else:
            changes.append((cur[0] - prev[0]) / 1e3)
            turns.append(((prev[0] - start[0]) / 1e3, count))
            start, count = cur, 1
    span_us = (hi - lo) / 1e3
    print(f"tenants {len(tenants)}, span {span_us / 1e3:.1f} ms, completions {len(events)} "
          f"({len(events) / span_us * 1e6:.0f}/s)")
    if turns:
        print(f"turns {len(turns)}: length p50 {pct([t[0] for t in turns], 50):.0f} µs "
              f"(p10 {pct([t[0] for t in turns], 10):.0f}, p90 {pct([t[0] for t in turns], 90):.0f}), "
              f"completions p50 {pct([t[1] for t in turns], 50)}")
    if changes:
        print(f"change of turn: p10 {pct(changes, 10):.1f}, p50 {pct(changes, 50):.1f}, "
              f"p90 {pct(changes, 90):.1f}, p99 {pct(changes, 99):.1f} µs; "
              f"{sum(changes) / span_us * 100:.1f}% of the span")
    print(f"within a turn: p10 {pct(within, 10):.1f}, p50 {pct(within, 50):.1f}, "
          f"p90 {pct(within, 90):.1f}, p99 {pct(within, 99):.1f} µs; {sum(within) / span_us * 100:.1f}% of the span")
    if len(turns) > 4:
        # Where a turn's time goes: the gaps of its first completions against its later ones.
        per_rank = {}
        i = 0
        for prev, cur in zip(events, events[1:]):
            if cur[1] == prev[1]:
                i += 1
                per_rank.setdefault(min(i, 12), []).append((cur[0] - prev[0]) / 1e3)
            else:
                i = 0
        print("gap before a turn's k-th completion (k>=2), p50 µs: " +
              ", ".join(f"{k}: {pct(v, 50):.1f}" for k, v in sorted(per_rank.items())))


if __name__ == "__main__":
    main()
