#!/usr/bin/env python3
"""The bursty LC shape's cliff: its seed-1 due times (2 s, 4 ms mean gap, as
bench/sharing_matrix.cpp draws them) through a server of constant service time S.
Within a burst requests are due 400 us apart, so any S above 400 us piles up.

  python3 bursty_sim.py
"""
import math

MASK = (1 << 64) - 1


class Rng:  # splitmix64, as bench/sharing_matrix.cpp's Rng
    def __init__(self, seed):
        self.s = (seed * 0x2545f4914f6cdd1d + 1) & MASK

    def next(self):
        self.s = (self.s + 0x9e3779b97f4a7c15) & MASK
        z = self.s
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK
        return z ^ (z >> 31)

    def uniform(self):
        return ((self.next() >> 11) + 0.5) * 2.0 ** -53

    def exponential(self, mean):
        return -mean * math.log(self.uniform())


def bursty(gap_ms=4.0, duration_s=2.0, seed=1):
    rng, out, t, close = Rng(seed), [], 0.0, gap_ms / 10
    while t < duration_s * 1e3:
        b = 5 + rng.next() % 6
        i = 0
        while i < b and t < duration_s * 1e3:
            out.append(t)
            i += 1
            t += close
        t += rng.exponential(b * (gap_ms - close))
    return out


def latencies(due_ms, service_us):
    free, lat = 0.0, []
    for d in due_ms:
        start = max(d * 1e3, free)
        free = start + service_us
        lat.append(free - d * 1e3)
    return sorted(lat)


due = bursty()
print(f"{len(due)} requests")
for s in (388, 395, 400, 405, 410, 420, 430, 450):
    lat = latencies(due, s)
    p = lambda q: lat[min(len(lat) - 1, int(q * (len(lat) - 1) + 0.5))]
    print(f"S = {s} us: p50 {p(0.5):.0f} us, p99 {p(0.99):.0f} us")
