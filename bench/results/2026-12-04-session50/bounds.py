#!/usr/bin/env python3
"""What no scheduler can beat in each cell of issue 15's matrix on this H200, beside what
rgpud measured at 9067a8a.

Reads call 1 (native and fair passes, call1/mx/sharing.json), call 2 (the fair+shared pass
again, call2/fs/sharing.json) and call 3 (the change of context, call3/switch-2000.json), and
prints a markdown table per shared cell:

- switch floor: the LC shape's native solo p99 (the median of its native runs, as the
  matrix divides by) plus one change of context (p99 of `other_context`), over that p99.
  With a context per tenant every request that meets BE work on the device waits for it,
  and a BE tenant that gets half of its solo rate keeps the device busy at least half the
  time: more than 1% of requests meet it (session 11's argument).
- BE ceiling: 1 minus the LC tenants' device time (kernel time x requests per second of the
  native solo run) and two changes of context per request, shared by the cell's BE tenants:
  kernels of separate contexts never run at once, so no BE tenant gets more. In one context
  (fair+shared) BE work may run beside an LC kernel, so it bounds a context per tenant only.
- piece: the shortest BE work that, once on the device, nothing stops: short, its narrowest
  run (451 us at one work-group per compute unit, session 8); long, one 25 ms work-group per
  compute unit; opaque, a 15 ms launch from a binary, never rewritten. An LC request that
  arrives behind it waits for it (separate contexts; opaque in one context too) or runs
  beside it on the same compute units (short and long in one context). It binds where
  piece > 0.25 x the native p99. Not counted (shown in brackets): membound (work-groups of
  about a nanosecond), and tiny and brief, whose one-wave launches (28 and 198 us at full
  width) narrow runs could shorten at a cost to the BE rate that was not measured.

The verdicts use the median (the larger p99 where two runs differ, so the looser floor); the
quietest native run's floor is shown beside it.

  python3 bounds.py > bounds.md
"""
import json
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
call1 = json.load(open(os.path.join(HERE, 'call1', 'mx', 'sharing.json')))
call2 = json.load(open(os.path.join(HERE, 'call2', 'fs', 'sharing.json')))
probe = json.load(open(os.path.join(HERE, 'call3', 'switch-2000.json')))
switch_us = probe['cases']['other_context']['switch_us']['p99']
cal = call1['calibration_matrix']
PIECE_US = {'short': 451.0, 'long': cal['spins']['long']['device_ms'] * 1e3,
            'opaque': cal['opaque']['device_ms'] * 1e3}
SOFT_US = {'membound': 0.0, 'tiny': cal['spins']['tiny']['back_to_back_device_ms'] * 1e3,
           'brief': cal['spins']['brief']['back_to_back_device_ms'] * 1e3}


def runs(doc, mode, scenario):
    return [r for r in doc['runs'] if r['mode'] == mode and r['scenario'] == scenario
            and not r.get('from_baseline')]


def stalled(r):
    return r['host']['late_over_1ms'] >= 3


native_lc = {}
native_be = {}
for r in call1['runs']:
    if r['mode'] != 'native':
        continue
    t = r['tenants'][0]
    if r['scenario'].startswith('mx_lc_'):
        native_lc.setdefault(r['scenario'][6:], []).append(t)
    elif r['scenario'].startswith('mx_be_'):
        native_be.setdefault(r['scenario'][6:], []).append(t['kernels_per_s'])


def measured(doc, mode, s, p99, kinds):
    rs = runs(doc, mode, s)
    if not rs:
        return None
    ts = rs[0]['tenants']
    lc = max(t['latency_us']['p99'] for t in ts if t['priority'] == 'latency-critical') / p99
    be = min(t['kernels_per_s'] / statistics.median(native_be[kinds[t['tenant']]]) for t in ts
             if t['priority'] != 'latency-critical')
    return lc, be, stalled(rs[0])


def fmt(m):
    if m is None:
        return '–'
    lc, be, st = m
    ok = lc <= 1.25 and be >= 0.5
    return f"{lc:.2f}x / {be:.2f}{' ✓' if ok else ''}{' ⚠' if st else ''}"


print(f"One change of context: {switch_us:.1f} µs (p99 of `other_context`, call 3). "
      "LC p99 and BE rate against native solo; ⚠: the host held the run back (3 or more "
      "wake-ups over 1 ms late).\n")
print("| cell | native LC p99 (ms): median (runs) | switch floor: median (quietest run) | BE ceiling | piece (µs) | what forbids the targets "
      "| fair (call 1) | fair+shared (call 2) |")
print("|---|---:|---:|---:|---:|---|---|---|")
counts = {'forbidden both': 0, 'forbidden fair only': 0, 'open': 0}
for r in call1['runs']:
    s = r['scenario']
    if r['mode'] != 'native' or s.startswith('mx_lc_') or s.startswith('mx_be_'):
        continue
    parts = s.split('_')
    two = parts[1] == '2lc2be'
    shape = f"{parts[2]}_{parts[3]}" if two else f"{parts[1]}_{parts[2]}"
    kind = 'short' if two else parts[3]
    kinds = {'be': kind, 'be2': 'membound'}
    solos = native_lc[shape]
    p99 = statistics.median(t['latency_us']['p99'] for t in solos)
    rate = statistics.median(t['kernels_per_s'] for t in solos)
    kernel_ms = solos[0]['kernel_device_ms']
    n_lc = 2 if two else 1
    n_be = 2 if two else 1
    floor = (p99 + switch_us) / p99
    quiet = min(t['latency_us']['p99'] for t in solos)
    floor_quiet = (quiet + switch_us) / quiet
    every = ' / '.join(f"{t['latency_us']['p99'] / 1e3:.3f}" for t in solos)
    ceiling = max(0.0, 1 - n_lc * rate * (kernel_ms / 1e3 + 2 * switch_us / 1e6)) / n_be
    piece = PIECE_US.get(kind, 0.0)
    shown = f"{piece:.0f}" if kind in PIECE_US else f"({SOFT_US[kind]:.0f})"
    why_sep, why_one = [], []
    if floor > 1.25:
        why_sep.append('switch')
    if ceiling < 0.5:
        why_sep.append('BE ceiling')
    if piece > 0.25 * p99:
        why_sep.append('piece')
        why_one.append('piece')
    if why_one:
        counts['forbidden both'] += 1
        verdict = ', '.join(sorted(set(why_sep + why_one)))
    elif why_sep:
        counts['forbidden fair only'] += 1
        verdict = ', '.join(why_sep) + ' (fair only)'
    else:
        counts['open'] += 1
        verdict = 'none'
    print(f"| `{s}` | {p99 / 1e3:.3f} ({every}) | {floor:.2f}x ({floor_quiet:.2f}x) | {ceiling:.2f} | {shown} | {verdict} "
          f"| {fmt(measured(call1, 'fair', s, p99, kinds))} "
          f"| {fmt(measured(call2, 'fair+shared', s, p99, kinds))} |")
print()
print(f"Of the {sum(counts.values())} shared cells: {counts['forbidden both']} forbidden in both modes, "
      f"{counts['forbidden fair only']} forbidden with a context per tenant only, {counts['open']} "
      "where nothing measured forbids the targets.")
