#!/usr/bin/env bash
# Session 32, call 7 (carry .carry-new as call 6, 49b2b1c). The other kinds whose launches go
# at once (`brief`, 0.2 ms launches of one wave, two in flight) and 2 LC + 2 BE, with
# --pipe-loops on (default) and off, under fair+shared and fair; native solo runs once.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c7 && rm -rf $W && mkdir -p $W
timeout 380 bash bench/sharing_on_device.sh .carry-new $W/mx --matrix \
  --modes native,fair+shared,fair+shared/--pipe-loops=0,fair,fair/--pipe-loops=0 \
  --scenarios mx_lc_poisson_370,mx_lc_periodic_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_be_brief,mx_be_short,mx_be_membound,mx_poisson_370_brief,mx_periodic_370_brief,mx_pareto_370_brief,mx_poisson_50_brief,mx_2lc2be_poisson_370 \
  --solo-repeats 1 --duration 2.5 --timeout 25 > $W/mx.log 2>&1
echo "mx rc=$?"
grep -E '^\| `mx_' $W/mx/sharing.md | head -16
mkdir -p /tmp/lg && tar -xzf $W/mx/rgpud-logs.tar.gz -C /tmp/lg 2>/dev/null
for f in /tmp/lg/*; do echo "$f"; grep -h "tenant be.* scheduling" $f | grep -o "[0-9]* at once, [0-9]* of them[^)]*" | head -12 | tr '\n' ';'; echo; done
rm -rf /tmp/lg
(cd /tmp && tar czf $OUT/c7.tar.gz c7)
