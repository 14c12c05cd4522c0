#!/usr/bin/env bash
# one variant: NAME then env assignments and -- rgpud args
run() { name=$1; shift; envs=(); args=();
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done; [ "${1:-}" = "--" ] && shift; args=("$@")
  for r in 1 2 3; do env "${envs[@]}" build/bench/rgpu-bench-overhead --build build --tasks sync --no-links --iterations 1000 --platform Portable --out /tmp/tog/$name-r$r "${args[@]}" > /tmp/tog/$name-r$r.log 2>&1; done
  python3 - /tmp/tog $name <<'PY'
import json,sys,statistics
d,n=sys.argv[1],sys.argv[2]
out={}
for r in range(1,4):
  j=json.load(open(f'{d}/{n}-r{r}/overhead.json'))['runs']
  for p in ('rgpu_unix','rgpu_tcp'):
    for k in ('launch_finish_us','read4_us'):
      out.setdefault((p,k),[]).append(j[p]['sync'][k]['p50']/j['native']['sync'][k]['p50'])
print(n, ' '.join(f"{p[5:]}:{k[:4]} {statistics.median(v):.2f}" for (p,k),v in out.items()))
PY
}
mkdir -p /tmp/tog
run base2 X=1
run spin0nopoll RGPU_SPIN_US=0 -- --rgpud-arg=--poll-us=0
run spin0nopollnoring RGPU_SPIN_US=0 RGPU_RING=0 -- --rgpud-arg=--poll-us=0
