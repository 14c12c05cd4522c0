#!/usr/bin/env python3
"""Joins a client's and rgpud's request stamps (proto/stamps.h) and prints where each request's
time went: p50 / p90 / p99 of every step in microseconds, then the slowest 2% of requests
with the steps that made them slow.

    RGPU_STAMPS=/tmp/st/server rgpud --listen unix:/tmp/s.sock &
    RGPU_STAMPS=/tmp/st/client RGPU_SERVER=unix:/tmp/s.sock ./app     # kernel + blocking read
    kill %1; bench/stamps.py /tmp/st/client.PID /tmp/st/server.PID [LAST_N]

A request is a kernel launch followed by a blocking clEnqueueReadBuffer, one client and one
session at a time (as bench/results/2026-11-27-session15/ runs them); the last N of each side
are joined in order."""
import sys

# proto/stamps.h, Point
LAUNCH_CALL, LAUNCH_QUEUED, READ_CALL, READ_WRITTEN, READ_RETURNS, READ_LANDED = 1, 2, 3, 4, 6, 7
FRAME_IN, FRAME_DONE, READ_ANSWERED, READ_SENT, SUBMIT, SUBMITTED, READ_ISSUED = 13, 14, 15, 16, 17, 18, 19
OP_LAUNCH, OP_READ = 48, 42  # proto::Op::NDRangeKernel, proto::Op::ReadBuffer


def load(path):
    # rgpud's stamps carry their session's id above bit 20 of the argument (proto/stamps.h).
    return [(p, a & 0xFFFFF, ns) for p, a, ns in (tuple(int(x) for x in line.split()) for line in open(path))]


def client_requests(stamps):
    out, cur = [], None
    for point, _, ns in stamps:
        if point == LAUNCH_CALL:
            cur = {point: ns}
        elif cur is not None:
            cur.setdefault(point, ns)
            if point == READ_RETURNS:
                out.append(cur)
                cur = None
    return out


def server_requests(stamps):
    out, cur = [], None
    for point, arg, ns in stamps:
        if point == FRAME_IN and arg == OP_LAUNCH:
            cur = {'launch_in': ns}
        elif cur is None:
            continue
        elif point == FRAME_IN and arg == OP_READ:
            cur['read_in'] = ns
        elif point == FRAME_DONE and arg == OP_READ:
            out.append(cur)
            cur = None
        elif point not in (FRAME_IN, FRAME_DONE):
            cur.setdefault(point, ns)
    return [r for r in out if {'read_in', READ_ANSWERED, READ_SENT, SUBMIT, SUBMITTED, READ_ISSUED} <= r.keys()]


STEPS = {
    'client: launch call': lambda c, s: c[LAUNCH_QUEUED] - c[LAUNCH_CALL],
    'client: launch returned -> read call': lambda c, s: c[READ_CALL] - c[LAUNCH_QUEUED],
    'client: read call -> request written': lambda c, s: c[READ_WRITTEN] - c[READ_CALL],
    'written -> rgpud has the launch frame': lambda c, s: s['launch_in'] - c[READ_WRITTEN],
    'rgpud: launch frame -> scheduler': lambda c, s: s[SUBMIT] - s['launch_in'],
    'rgpud: scheduler (driver enqueue)': lambda c, s: s[SUBMITTED] - s[SUBMIT],
    'rgpud: launch done -> read frame in': lambda c, s: s['read_in'] - s[SUBMITTED],
    'rgpud: read frame -> driver read': lambda c, s: s[READ_ISSUED] - s['read_in'],
    'rgpud: driver blocking read': lambda c, s: s[READ_ANSWERED] - s[READ_ISSUED],
    'rgpud: answer to the socket': lambda c, s: s[READ_SENT] - s[READ_ANSWERED],
    'answer sent -> client has it': lambda c, s: c[READ_LANDED] - s[READ_SENT],
    'client: has it -> read returns': lambda c, s: c[READ_RETURNS] - c[READ_LANDED],
}
TOTALS = {
    'TOTAL at the client': lambda c, s: c[READ_RETURNS] - c[LAUNCH_CALL],
    'rgpud: launch frame in -> answer sent': lambda c, s: s[READ_SENT] - s['launch_in'],
}


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main():
    last = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    cl = client_requests(load(sys.argv[1]))[-last:]
    sv = server_requests(load(sys.argv[2]))[-last:]
    n = min(len(cl), len(sv))
    pairs = list(zip(cl[-n:], sv[-n:]))
    print(f"{n} requests joined (us)")
    if n == 0:
        sys.exit("no requests to join: give the client's file first, then rgpud's")
    for name, f in {**STEPS, **TOTALS}.items():
        v = [f(c, s) / 1e3 for c, s in pairs]
        print(f"  {name:42s} p50 {pct(v, .5):8.1f}  p90 {pct(v, .9):8.1f}  p99 {pct(v, .99):8.1f}")
    medians = {k: pct([f(c, s) for c, s in pairs], .5) for k, f in STEPS.items()}
    slowest = sorted(pairs, key=lambda p: -TOTALS['TOTAL at the client'](*p))[: max(1, n // 50)]
    print("slowest 2%: steps more than 10 us over their median")
    for c, s in slowest:
        over = [f"{k} +{(f(c, s) - medians[k]) / 1e3:.0f}" for k, f in STEPS.items() if f(c, s) - medians[k] > 10e3]
        print(f"  {TOTALS['TOTAL at the client'](c, s) / 1e3:7.1f}: " + "; ".join(over))


if __name__ == '__main__':
    main()
