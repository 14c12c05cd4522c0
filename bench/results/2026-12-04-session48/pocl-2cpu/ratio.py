#!/usr/bin/env python3
"""Each run's rgpu p50 over the same run's native p50 (sync task of rgpu-bench-overhead), per
run and as the median and worst over the runs given.

    python3 ratio.py base*.json
"""
import json
import os
import statistics as st
import sys

acc = {}
for f in sys.argv[1:]:
    r = json.load(open(f))["runs"]
    line = []
    for k in ("launch_finish_us", "read4_us"):
        n = r["native"]["sync"][k]["p50"]
        for p in ("rgpu_unix", "rgpu_tcp"):
            v = r[p]["sync"][k]["p50"] / n
            acc.setdefault((k, p), []).append(v)
            line.append("%s/%s %.2f" % (k[:4], p[5:], v))
    print(os.path.basename(f), "native %.1f" % r["native"]["sync"]["launch_finish_us"]["p50"], " ".join(line))
for k, v in acc.items():
    print(k, "median %.2f worst %.2f n=%d" % (st.median(v), max(v), len(v)))
