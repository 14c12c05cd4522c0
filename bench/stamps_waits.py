#!/usr/bin/env python3
"""Where a closed loop of launches spends its time through rgpud: an application that enqueues
launch i, flushes, then waits for launch i-D+1 with clWaitForEvents (the matrix's BE tenant,
D launches in flight), one client and one session. Joins the client's and rgpud's request
stamps (proto/stamps.h) and prints p50 / p90 / p99 of each step in microseconds.

    RGPU_STAMPS=/tmp/st/s rgpu-bench-sharing --matrix --scenarios mx_be_tiny --modes fair ...
    bench/stamps_waits.py CLIENT_FILE SERVER_FILE

Beside other tenants, rgpud's file holds every session's stamps: the one whose number of
launch frames is nearest the client's number of launches is taken.

The step that ends the wait (rgpud's driver wait returns -> the client's clWaitForEvents
returns) and the steps up to the next launch's enqueue in rgpud are what the device waits
for when the loop cannot keep it busy."""
import sys

LAUNCH_CALL, LAUNCH_QUEUED, WAIT_CALL, WAIT_RETURNS = 1, 2, 20, 21
FRAME_IN, FRAME_DONE, SUBMIT, SUBMITTED, WAIT_DONE = 13, 14, 17, 18, 22
OP_LAUNCH, OP_WAIT = 48, 54  # proto::Op::NDRangeKernel, proto::Op::WaitEvents


def load(path):
    return [tuple(int(x) for x in line.split()) for line in open(path)]


def one_session(server, launches=None):
    """rgpud's stamps of the session that waited for events most (the argument's upper bits
    are the session's id), or, given the client's number of launches, of the session whose
    number of launch frames is nearest it; with the id taken off."""
    waits, frames = {}, {}
    for p, a, _ in server:
        if p == FRAME_IN and a & 0xFFFFF == OP_WAIT:
            waits[a >> 20] = waits.get(a >> 20, 0) + 1
        if p == FRAME_IN and a & 0xFFFFF == OP_LAUNCH:
            frames[a >> 20] = frames.get(a >> 20, 0) + 1
    if launches is not None and frames:
        sid = min(frames, key=lambda k: abs(frames[k] - launches))
    else:
        sid = max(waits, key=waits.get) if waits else 0
    return [(p, a & 0xFFFFF, ns) for p, a, ns in server if a >> 20 == sid]


def series(stamps, point, arg=None):
    return [ns for p, a, ns in stamps if p == point and (arg is None or a == arg)]


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float('nan')


def main():
    client = load(sys.argv[1])
    server = one_session(load(sys.argv[2]), sum(1 for p, _, _ in client if p == LAUNCH_CALL))
    c = {k: series(client, k) for k in (LAUNCH_CALL, LAUNCH_QUEUED, WAIT_CALL, WAIT_RETURNS)}
    s = {'launch_in': series(server, FRAME_IN, OP_LAUNCH), 'submit': series(server, SUBMIT),
         'submitted': series(server, SUBMITTED), 'wait_in': series(server, FRAME_IN, OP_WAIT),
         'wait_done': series(server, WAIT_DONE), 'wait_out': series(server, FRAME_DONE, OP_WAIT)}
    # The client's warm-up launches wait in clFinish, not clWaitForEvents: align both sides on
    # their last launches, and the waits on the launches they follow.
    n = min(len(c[LAUNCH_CALL]), len(s['launch_in']), len(s['submitted']))
    w = min(len(c[WAIT_CALL]), len(c[WAIT_RETURNS]), len(s['wait_in']), len(s['wait_done']))
    if n < 100 or w < 100:
        sys.exit(f'too few stamps: {n} launches, {w} waits')
    L = {k: v[-n:] for k, v in c.items() if k in (LAUNCH_CALL, LAUNCH_QUEUED)}
    W = {k: v[-w:] for k, v in c.items() if k in (WAIT_CALL, WAIT_RETURNS)}
    SL = {k: s[k][-n:] for k in ('launch_in', 'submit', 'submitted')}
    SW = {k: s[k][-w:] for k in ('wait_in', 'wait_done')}
    # Each launch i, then the first wait the client calls after it (for launch i-D+1): the
    # steps of one turn of the loop, in order.
    import bisect
    turns = []
    for i in range(n - 1):
        k = bisect.bisect_right(W[WAIT_CALL], L[LAUNCH_CALL][i])
        if k >= w or W[WAIT_CALL][k] > L[LAUNCH_CALL][i + 1]:
            continue
        turns.append({
            'client: launch call': L[LAUNCH_QUEUED][i] - L[LAUNCH_CALL][i],
            'launch queued -> rgpud has its frame': SL['launch_in'][i] - L[LAUNCH_QUEUED][i],
            'rgpud: frame -> scheduler': SL['submit'][i] - SL['launch_in'][i],
            'rgpud: scheduler + driver enqueue': SL['submitted'][i] - SL['submit'][i],
            'rgpud: enqueued -> has the wait': SW['wait_in'][k] - SL['submitted'][i],
            'rgpud: driver wait': SW['wait_done'][k] - SW['wait_in'][k],
            'rgpud: wait done -> client returns': W[WAIT_RETURNS][k] - SW['wait_done'][k],
            'client: wait returns -> next launch call': L[LAUNCH_CALL][i + 1] - W[WAIT_RETURNS][k],
            'loop: one turn (launch call to launch call)': L[LAUNCH_CALL][i + 1] - L[LAUNCH_CALL][i],
        })
    names = list(turns[0].keys())
    loop = names[-1]
    med = {k: pct([t[k] for t in turns], .5) for k in names}
    slow = [t for t in turns if t[loop] > 2 * med[loop]]
    total = sum(t[loop] for t in turns)
    print(f'{n} launches, {w} waits, {len(turns)} turns; {len(slow)} turns over twice the median '
          f'take {sum(t[loop] for t in slow) / total:.1%} of the loop\'s time (µs)')
    print('| step | p50 | p90 | p99 | p99.9 | max | in slow turns, above its p50 (sum, ms) |')
    print('|---|---:|---:|---:|---:|---:|---:|')
    for k in names:
        xs = [t[k] / 1e3 for t in turns]
        extra = sum(max(0, t[k] - med[k]) for t in slow) / 1e6
        print(f'| {k} | {pct(xs, .5):.1f} | {pct(xs, .9):.1f} | {pct(xs, .99):.1f} | '
              f'{pct(xs, .999):.1f} | {max(xs):.1f} | {extra:.1f} |')
    print(f'loop total {total / 1e6:.1f} ms; at the median turn it would be '
          f'{med[loop] * len(turns) / 1e6:.1f} ms')
    # When the slow turns come: gaps between them in launches.
    idx = [i for i, t in enumerate(turns) if t[loop] > 2 * med[loop]]
    gaps = [b - a for a, b in zip(idx, idx[1:])]
    if gaps:
        print('launches between slow turns: p10 / p50 / p90', pct(gaps, .1), pct(gaps, .5), pct(gaps, .9))


if __name__ == '__main__':
    main()
