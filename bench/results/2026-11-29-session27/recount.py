#!/usr/bin/env python3
"""Counts the matrix cells that meet issue 15's targets against the strictest native solo
runs of several matrix runs (the lowest native solo LC p99 and the highest native solo BE
rate any of them measured), since one run's native solo p99 (about 500 requests) swings by
up to 1.6x between runs and moves every ratio of that run with it.

    recount.py RUN_DIR... [--cells MODE@RUN_DIR]

Each RUN_DIR holds sharing.json from `rgpu-bench-sharing --matrix`.
"""
import json
import sys


def load(path):
    d = json.load(open(f"{path}/sharing.json"))
    return {(r["mode"], r["scenario"]): r for r in d["runs"]}


def lc_p99(r):
    return [t["latency_us"]["p99"] for t in r["tenants"] if t["role"] == "lc"]


def be_rate(r):
    return [t["kernels_per_s"] for t in r["tenants"] if t["role"] == "be"]


def main(argv):
    show = [a.split("=", 1)[1] for a in argv if a.startswith("--cells=")]
    dirs = [a for a in argv if not a.startswith("--")]
    runs = {d: load(d) for d in dirs}
    base = {}
    for d, rs in runs.items():
        for (mode, sc), r in rs.items():
            if mode != "native":
                continue
            if sc.startswith("mx_lc_"):
                base[sc] = min(base.get(sc, float("inf")), lc_p99(r)[0])
            elif sc.startswith("mx_be_"):
                base[sc] = max(base.get(sc, 0.0), be_rate(r)[0])
    for d, rs in runs.items():
        modes = sorted({m for (m, _) in rs if m != "native"})
        for mode in modes:
            met, rows = 0, []
            for (m, sc), r in sorted(rs.items()):
                if m != mode or sc.startswith(("mx_lc_", "mx_be_")):
                    continue
                if sc.startswith("mx_2lc2be"):
                    lc, bes = "mx_lc_poisson_370", ["short", "membound"]
                else:
                    _, arr, length, kind = sc.split("_")
                    lc, bes = f"mx_lc_{arr}_{length}", [kind]
                lr = max(p / base[lc] for p in lc_p99(r))
                br = min(b / base[f"mx_be_{k}"] for b, k in zip(be_rate(r), bes))
                ok = lr <= 1.25 and br >= 0.5
                met += ok
                rows.append((sc, lr, br, "met" if ok else ""))
            print(f"{d} {mode}: {met} of {len(rows)} cells met")
            if f"{mode}@{d}" in show:
                for row in rows:
                    print("  %-28s %7.2fx %5.2f %s" % row)


if __name__ == "__main__":
    main(sys.argv[1:])
