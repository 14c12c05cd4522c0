#!/usr/bin/env bash
# Session 18, call 2 (device tool, carry .carry-new = HEAD 08bd980 + control rings, uncommitted):
# control rings on (default) and off (RGPU_RING=0), same binaries, alternating twice:
# round trips, launch rate, requests; then LC-alone matrix cells and one shared cell.
set -u
N=.carry-new
for r in 1 2; do
  for ring in 0 1; do
    RGPU_RING=$ring timeout 150 bash bench/on_device.sh $N $OUT/ovh-ring$ring-$r --tasks sync,async,requests \
      --no-links --iterations 3000 --async-launches 100000 --request-us 10,50,370,2000 \
      --worker-timeout 100 > /dev/null 2>&1
    echo "ovh ring=$ring round $r rc=$?"
  done
done
for ring in 0 1; do
  RGPU_RING=$ring timeout 120 bash bench/sharing_on_device.sh $N $OUT/mx-ring$ring --matrix \
    --scenarios mx_lc_periodic_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_poisson_370_membound,mx_be_membound \
    --modes native,fair --duration 2 --timeout 25 > /dev/null 2>&1
  echo "mx ring=$ring rc=$?"
done
cd $OUT && tar czf ab.tar.gz ovh-ring* mx-ring* && rm -rf ovh-ring* mx-ring*
