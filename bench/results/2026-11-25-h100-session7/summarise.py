#!/usr/bin/env python3
"""Tables of the session-7 H100 runs: rgpu before (420d557) and after, side by side.

    summarise.py DIR     (DIR holds base-1, new-1, base-2, new-2, *-b100-*, bulk/*)
"""
import json
import sys
from pathlib import Path

d = Path(sys.argv[1])


def load(name):
    p = d / name / "overhead.json"
    return json.loads(p.read_text())["runs"] if p.exists() else None


def fmt(x, n=1):
    return "–" if x is None else f"{x:.{n}f}"


print("### Synchronous round trips (µs, p50 / p99)\n")
print("| run | path | launch+finish | 4-byte read |")
print("|---|---|---:|---:|")
for v in ("base-1", "new-1", "base-2", "new-2"):
    runs = load(v)
    for path in ("native", "rgpu_unix", "rgpu_tcp"):
        s = runs[path]["sync"]
        lf, rd = s["launch_finish_us"], s["read4_us"]
        print(f"| {v} | {path} | {fmt(lf['p50'])} / {fmt(lf['p99'])} | {fmt(rd['p50'])} / {fmt(rd['p99'])} |")

print("\n### Asynchronous launch rate against native (same run)\n")
print("| run | burst | native launches/s | rgpu unix | rgpu tcp |")
print("|---|---:|---:|---:|---:|")
for v in ("base-1", "new-1", "base-2", "new-2", "base-b100-1", "new-b100-1", "base-b100-2", "new-b100-2"):
    runs = load(v)
    if not runs:
        continue
    nat = runs["native"]["async"]
    row = [f"{runs[p]['async']['launches_per_s'] / nat['launches_per_s']:.2f}" for p in ("rgpu_unix", "rgpu_tcp")]
    print(f"| {v} | {nat['launches']} | {nat['launches_per_s']:.0f} | {row[0]} | {row[1]} |")

print("\n### Requests: kernel + 4-byte blocking read, µs added over native (p50 / p99)\n")
print("| run | kernel µs | unix | tcp |")
print("|---|---:|---:|---:|")
for v in ("base-1", "new-1", "base-2", "new-2"):
    runs = load(v)
    for i, nat in enumerate(runs["native"]["requests"]):
        cells = []
        for p in ("rgpu_unix", "rgpu_tcp"):
            r = runs[p]["requests"][i]["request_us"]
            cells.append(f"{r['p50'] - nat['request_us']['p50']:+.0f} / {r['p99'] - nat['request_us']['p99']:+.0f}")
        print(f"| {v} | {nat['target_us']:.0f} | {cells[0]} | {cells[1]} |")

print("\n### Bulk transfers through the shared region (rgpu unix) against native pageable, GB/s\n")
print("Blocking; each cell rgpu / native (ratio), native measured in the same run.\n")
print("| size | writes before | writes after | writes after, 1 copy thread | reads before | reads after | reads after, 1 copy thread |")
print("|---:|---:|---:|---:|---:|---:|---:|")
bulk = {v: json.loads((d / "bulk" / v / "overhead.json").read_text())["runs"] for v in ("base", "new", "new-1t")}
sizes = [p["bytes"] for p in bulk["new"]["native"]["bandwidth"]]
for i, size in enumerate(sizes):
    if size < 256 * 1024:
        continue
    cells = []
    for key in ("write_blocking_gbps", "read_blocking_gbps"):
        for v in ("base", "new", "new-1t"):
            nat = bulk[v]["native"]["bandwidth"][i][key]
            rg = bulk[v]["rgpu_unix"]["bandwidth"][i][key]
            cells.append(f"{rg:.1f} / {nat:.1f} ({rg / nat:.2f})")
    label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
    print(f"| {label} | " + " | ".join(cells) + " |")
