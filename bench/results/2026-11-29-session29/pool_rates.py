#!/usr/bin/env python3
"""Pools the launch-rate rounds of several overhead-benchmark invocations per variant.

    pool_rates.py DIR [DIR ...]   (each DIR/<name>-<variant>/overhead.json; name = n<launches>-r<round>)

For each burst size and variant: every round's launches/s per path, the median over all of a
variant's rounds against the median of the native rounds of the same variant's invocations,
and the worst round against that median."""
import collections
import json
import pathlib
import statistics
import sys

pools = collections.defaultdict(lambda: collections.defaultdict(list))
for d in sys.argv[1:]:
    for f in sorted(pathlib.Path(d).glob("*/overhead.json")):
        size, _, variant = f.parent.name.split("-", 2)
        for path, run in json.loads(f.read_text())["runs"].items():
            if "async" in run:
                pools[(size, variant)][path].extend(run["async"]["rounds_launches_per_s"])
print("| launches | variant | native (k/s, median) | unix / native | TCP / native | worst unix | worst TCP | rounds |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for (size, variant), p in sorted(pools.items()):
    n = statistics.median(p["native"])
    u, t = p["rgpu_unix"], p["rgpu_tcp"]
    print(f"| {size[1:]} | {variant} | {n / 1e3:.1f} | {statistics.median(u) / n:.3f} | "
          f"{statistics.median(t) / n:.3f} | {min(u) / n:.3f} | {min(t) / n:.3f} | {len(u)} |")
