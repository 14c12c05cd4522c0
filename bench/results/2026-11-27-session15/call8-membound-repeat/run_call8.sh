#!/usr/bin/env bash
# Session 15, call 8: how often the membound cells meet both targets, at b8cfffb: native,
# fair and fair+shared, three rounds in one call (2 s per run).
#   bash .carry-s15/run_call8.sh .carry-s15 $OUT
C=$1 O=$2
mkdir -p $O
cells=mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_be_membound,mx_periodic_370_membound,mx_poisson_370_membound,mx_bursty_370_membound,mx_pareto_370_membound,mx_poisson_50_membound
for i in 1 2 3; do
  bash bench/sharing_on_device.sh $C $O/r$i --matrix --modes native,fair,fair+shared --scenarios $cells \
    --duration 2 --timeout 25 > /dev/null 2>&1
  echo "== round $i"; grep -A 14 "^## Matrix (" $O/r$i/sharing.md | grep "^| \`"
  rm -f $O/r$i/rgpud-logs.tar.gz $O/r$i/device-log.txt $O/r$i/progress.txt
done
cd $O && tar czf runs.tar.gz r1 r2 r3 && rm -rf r1 r2 r3
