#!/usr/bin/env python3
"""Where a burst of launches spends its time between a client and rgpud: joins a client's and
rgpud's request stamps (proto/stamps.h) for bursts of N launches each ended by clFinish, as the
overhead benchmark's launch-rate task times them (`--tasks async --async-launches 100`), and
prints p50 / p90 of every step in microseconds.

    RGPU_STAMPS=/tmp/st/s bench/on_device.sh CARRY OUT --tasks async --async-launches 100 ...
    bench/stamps_bursts.py CLIENT_STAMPS SERVER_STAMPS [BURSTS]
    bench/stamps_bursts.py DIR [BURSTS]

The client's file is the one with clFinish stamps (point 23); rgpud's the one with frames (13).
Given a directory, every client file in it is paired with the rgpud file whose launch frames
fall within the client's time (the benchmark's workers run one after another). The last
BURSTS bursts of each side (default 101) are joined in order."""
import os
import sys

# proto/stamps.h, Point
LAUNCH_CALL, FINISH_CALL, FINISH_RETURNS, WRITTEN = 1, 23, 24, 25
FRAME_IN, FRAME_DONE, SUBMIT, SUBMITTED = 13, 14, 17, 18
OP_LAUNCH, OP_FINISH = 48, 53  # proto::Op::NDRangeKernel, proto::Op::Finish


def load(path):
    # rgpud's stamps carry their session's id above bit 20 of the argument.
    return [(p, a & 0xFFFFF, ns) for p, a, ns in (tuple(int(x) for x in line.split()) for line in open(path))]


def client_bursts(stamps):
    """[first launch call, first write after it, finish call, finish returns, launches]."""
    out, cur = [], None
    for point, _, ns in sorted(stamps, key=lambda s: s[2]):
        if point == LAUNCH_CALL:
            if cur is None:
                cur = {"first": ns, "launches": 0}
            cur["launches"] += 1
        elif cur is None:
            continue
        elif point == WRITTEN:
            cur.setdefault("written", ns)
        elif point == FINISH_CALL:
            cur["finish_call"] = ns
        elif point == FINISH_RETURNS:
            cur["finish_returns"] = ns
            out.append(cur)
            cur = None
    return out


def server_bursts(stamps):
    out = []
    cur = {"launches": []}
    launch = None
    for point, arg, ns in stamps:  # one reader thread per session: in order
        if point == FRAME_IN:
            if arg == OP_LAUNCH:
                launch = {"in": ns}
            elif arg == OP_FINISH:
                cur["finish_in"] = ns
        elif point == SUBMIT and launch is not None:
            launch["submit"] = ns
        elif point == SUBMITTED and launch is not None:
            launch["submitted"] = ns
        elif point == FRAME_DONE:
            if arg == OP_LAUNCH and launch is not None:
                launch["done"] = ns
                if len(launch) == 4:
                    cur["launches"].append(launch)
                launch = None
            elif arg == OP_FINISH and "finish_in" in cur:
                cur["finish_done"] = ns
                if cur["launches"]:
                    out.append(cur)
                cur = {"launches": []}
    return out


def pct(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def pairs(directory):
    clients, servers = [], []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        stamps = load(path)
        if any(p == FINISH_CALL for p, _, _ in stamps):
            clients.append((path, min(ns for _, _, ns in stamps), max(ns for _, _, ns in stamps)))
        elif any(p == FRAME_IN for p, _, _ in stamps):
            servers.append((path, [ns for p, a, ns in stamps if p == FRAME_IN and a == OP_LAUNCH]))
    for path, lo, hi in clients:
        for spath, frames in servers:
            inside = sum(lo <= ns <= hi for ns in frames)
            if inside:
                yield path, spath


def report(client_path, server_path, n):
    client = client_bursts(load(client_path))
    server = server_bursts(load(server_path))
    client, server = client[-n:], server[-n:]
    if len(client) != len(server):
        sys.exit(f"{len(client)} client bursts against {len(server)} of rgpud's")
    steps = {}

    def add(name, ns):
        steps.setdefault(name, []).append(ns / 1e3)

    for c, s in zip(client, server):
        ls = s["launches"]
        if len(ls) != c["launches"]:
            sys.exit(f"a burst of {c['launches']} launches met one of {len(ls)} in rgpud")
        add("burst: first clEnqueueNDRangeKernel to clFinish returning", c["finish_returns"] - c["first"])
        add("client: first launch call to its first write", c.get("written", c["first"]) - c["first"])
        add("client: first launch call to clFinish called", c["finish_call"] - c["first"])
        add("first launch call to rgpud's first launch frame", ls[0]["in"] - c["first"])
        add("rgpud: first launch frame to last launch done", ls[-1]["done"] - ls[0]["in"])
        driver = sum(x["submitted"] - x["submit"] for x in ls)
        handler = sum(x["done"] - x["in"] for x in ls)
        between = sum(b["in"] - a["done"] for a, b in zip(ls, ls[1:]))
        add("rgpud: in the scheduler and driver (sum)", driver)
        add("rgpud: handler outside the scheduler (sum)", handler - driver)
        add("rgpud: between launch frames (sum: reading, waiting)", between)
        add("rgpud: last launch done to clFinish frame in", s["finish_in"] - ls[-1]["done"])
        add("rgpud: clFinish frame in to done (driver's clFinish, reply)", s["finish_done"] - s["finish_in"])
        add("clFinish done in rgpud to clFinish returning", c["finish_returns"] - s["finish_done"])
        add("per launch: scheduler and driver", driver / len(ls))
        add("per launch: rgpud's own (handler outside it + between frames)", (handler - driver + between) / len(ls))
    for a, b in zip(client, client[1:]):
        add("client: clFinish returning to the next burst's first launch", b["first"] - a["finish_returns"])
    print(f"{len(client)} bursts of {client[0]['launches']} launches; p50 / p90 in µs\n")
    print("| step | p50 | p90 |\n|---|---:|---:|")
    for name, v in steps.items():
        print(f"| {name} | {pct(v, 0.5):.1f} | {pct(v, 0.9):.1f} |")


def main():
    if os.path.isdir(sys.argv[1]):
        n = int(sys.argv[2]) if len(sys.argv) > 2 else 101
        for c, s in pairs(sys.argv[1]):
            print(f"\nclient {os.path.basename(c)}, rgpud {os.path.basename(s)}: ", end="")
            report(c, s, n)
    else:
        report(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 101)


if __name__ == "__main__":
    main()
