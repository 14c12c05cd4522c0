#!/usr/bin/env python3
"""Floors and ceilings for the workload matrix when every tenant has its own context.

Reads the matrix run (matrix/sharing.json) and the switch probe (switch-probe/), and writes,
per shared cell, what no scheduler that keeps tenants in separate contexts can beat on this
device, beside what fair and fair+shared measured in the same run:

- LC p99 floor: the LC shape's native solo p99 plus one context switch (a BE tenant of every
  kind keeps the device busy, so nearly every request meets a BE kernel and waits for the
  switch to its own context), over the native solo p99. Work-groups that cannot be cut (the
  short kind's run a few hundred us even narrow; long's 25 ms; opaque's whole 15 ms launch)
  add to it; this floor leaves them out, so it is optimistic.
- BE ceiling: 1 minus the LC tenants' device share (kernel time x requests per second,
  native solo) minus two switches per request (to the LC context and back), divided among
  the BE tenants of the cell (fair gives equal weights equal time). Kernels of separate
  contexts never overlap, so no BE tenant gets more.

  python3 bounds.py > bounds.md
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
run = json.load(open(os.path.join(HERE, 'matrix', 'sharing.json')))
probe = json.load(open(os.path.join(HERE, 'switch-probe', 'switch-opencl-2000.json')))
switch_us = probe['cases']['other_context']['switch_us']['p99']

native_lc, native_be = {}, {}
for r in run['runs']:
    if r['mode'] != 'native':
        continue
    t = r['tenants'][0]
    if r['scenario'].startswith('mx_lc_'):
        native_lc[r['scenario'][6:]] = t
    elif r['scenario'].startswith('mx_be_'):
        native_be[r['scenario'][6:]] = t['kernels_per_s']


def measured(mode, scenario):
    for r in run['runs']:
        if r['mode'] == mode and r['scenario'] == scenario:
            return r['tenants']
    return None


print(f"One context switch: {switch_us:.1f} us (p99 of `other_context`, rgpu-probe-switch, NVIDIA OpenCL).\n")
print("| cell | native LC p99 alone (ms) | LC floor, separate contexts | fair | fair+shared "
      "| BE ceiling, separate contexts | fair BE | fair+shared BE |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for r in run['runs']:
    if r['mode'] != 'native':
        continue
    s = r['scenario']
    if s.startswith('mx_lc_') or s.startswith('mx_be_'):
        continue
    lcs = [t for t in r['tenants'] if t['priority'] == 'latency-critical']
    bes = [t for t in r['tenants'] if t['priority'] != 'latency-critical']
    parts = s.split('_')
    shape = f"{parts[2]}_{parts[3]}" if parts[1] == '2lc2be' else f"{parts[1]}_{parts[2]}"
    solo = native_lc[shape]
    p99 = solo['latency_us']['p99']
    floor = (p99 + switch_us) / p99
    rate = solo['kernels_per_s']
    lc_share = len(lcs) * (solo['kernel_device_ms'] / 1e3 * rate + 2 * switch_us / 1e6 * rate)
    ceiling = max(0.0, 1 - lc_share) / len(bes)
    cols = []
    for mode in ('fair', 'fair+shared'):
        ts = measured(mode, s)
        worst_lc = max(t['latency_us']['p99'] for t in ts if t['priority'] == 'latency-critical') / p99
        cols.append(worst_lc)
    be_cols = []
    for mode in ('fair', 'fair+shared'):
        ts = measured(mode, s)
        kinds = {'be': parts[3] if parts[1] != '2lc2be' else 'short', 'be2': 'membound'}
        be_cols.append(min(t['kernels_per_s'] / native_be[kinds[t['tenant']]] for t in ts
                           if t['priority'] != 'latency-critical'))
    mark = lambda ok: '' if ok else ' ✗'
    print(f"| `{s}` | {p99 / 1e3:.3f} | {floor:.2f}x{mark(floor <= 1.25)} | {cols[0]:.2f}x | {cols[1]:.2f}x "
          f"| {ceiling:.2f}{mark(ceiling >= 0.5)} | {be_cols[0]:.2f} | {be_cols[1]:.2f} |")
