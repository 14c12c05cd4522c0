#!/usr/bin/env bash
# Alternates two variants of the sync task: old (RGPU_SPIN_YIELD_US=20, --poll-yields=0) and new (defaults).
out=$1; rounds=$2; mkdir -p $out
for r in $(seq $rounds); do
  RGPU_SPIN_YIELD_US=20 build/bench/rgpu-bench-overhead --build build --tasks sync --no-links --iterations 1000 --platform Portable --rgpud-arg=--poll-yields=0 --out $out/old-r$r > $out/old-r$r.log 2>&1
  build/bench/rgpu-bench-overhead --build build --tasks sync --no-links --iterations 1000 --platform Portable --out $out/new-r$r > $out/new-r$r.log 2>&1
done
python3 - $out $rounds <<'PY'
import json,sys,statistics
d,n=sys.argv[1],int(sys.argv[2])
for v in ('old','new'):
  out={}
  for r in range(1,n+1):
    j=json.load(open(f'{d}/{v}-r{r}/overhead.json'))['runs']
    for p in ('rgpu_unix','rgpu_tcp'):
      for k in ('launch_finish_us','read4_us'):
        out.setdefault((p,k),[]).append(j[p]['sync'][k]['p50']/j['native']['sync'][k]['p50'])
  print(v, ' | '.join(f"{p[5:]} {k[:-3]} median {statistics.median(x):.2f} (" + ' '.join(f'{y:.2f}' for y in x) + ')' for (p,k),x in out.items()))
PY
