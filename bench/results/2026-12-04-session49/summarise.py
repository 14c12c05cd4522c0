#!/usr/bin/env python3
"""Session 49: rgpud's default against --serve-aside-us=0 (and --inline-waits=0 in call 1), from
the overhead benchmark's runs in callN/ovh-MODE-rR/overhead.json: the sync round trips (p50 /
p99) and what each path adds to a request over native at p50 / p99, per kernel length, after an
idle pause and back to back. Usage: summarise.py call1 call2"""
import json, sys, glob, os, statistics

def load(path):
    d = json.load(open(path))
    return d['runs']

def sync(run, key):
    s = run.get('sync', {}).get(key)
    return s

for call in sys.argv[1:]:
    print(f'## {call}')
    for path in sorted(glob.glob(f'{call}/ovh-*/overhead.json')):
        name = os.path.basename(os.path.dirname(path))
        runs = load(path)
        nat = runs['native']
        line = [name]
        for p in ('rgpu_unix', 'rgpu_tcp'):
            r = runs[p]
            added = []
            for rq, nq in zip(r['requests'], nat['requests']):
                k = round(nq['target_us'])
                for kind in ('request_us', 'request_b2b_us'):
                    a50 = rq[kind]['p50'] - nq[kind]['p50']
                    a99 = rq[kind]['p99'] - nq[kind]['p99']
                    added.append((k, 'idle' if kind == 'request_us' else 'b2b', a50, a99))
            worst50 = max(added, key=lambda t: t[2])
            worst99 = max(added, key=lambda t: t[3])
            line.append(f'{p}: worst +{worst50[2]:.1f} p50 ({worst50[0]} us {worst50[1]}), '
                        f'+{worst99[3]:.1f} p99 ({worst99[0]} us {worst99[1]})')
        for p in ('native', 'rgpu_unix', 'rgpu_tcp'):
            sy = runs[p]['sync']
            line.append(f"{p} sync l+f {sy['launch_finish_us']['p50']:.1f}/{sy['launch_finish_us']['p99']:.1f} "
                        f"read {sy['read4_us']['p50']:.1f}/{sy['read4_us']['p99']:.1f}")
        print(' | '.join(line))
