#!/usr/bin/env bash
# Session 24, call 2 (carries .carry-old = d1af62e, main, without lib/; .carry-new = the same with one-wave
# runs measuring their wave, uncommitted): (1) gate_probe.cpp natively on NVIDIA: how long a
# marker behind a user event takes to complete once it is set (a held launch's application
# event); (2) BE launches of one 30 us wave (`brief`, --be-brief-ms 0.03) beside the Poisson
# 370 us LC, 2 and 8 launches in flight, old and new; (3) Poisson 370 + membound, old and new.
set -u
[ -d .carry-old/lib ] || cp -r .carry-new/lib .carry-old/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
. bench/device_vendors.sh
V=$(device_vendors /dev/null)
g++ -O2 -std=c++20 -o /tmp/gate_probe bench/results/2026-11-28-session24/gate_probe.cpp -lOpenCL 2>&1 | tail -3
OCL_ICD_VENDORS=$V timeout 120 /tmp/gate_probe | tee $OUT/gate.txt
run() {  # carry, name, then rgpu-bench-sharing options
  local c=$1 n=$2; shift 2
  timeout 280 bash bench/sharing_on_device.sh $c $OUT/$n --matrix "$@" --duration 3 --timeout 25 > /dev/null 2>&1
  echo "$n rc=$?"
  grep -B2 -A12 'Matrix (LC p99' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---' | grep -v options
  grep -A8 'solo runs' $OUT/$n/sharing.md | grep '^|' | grep -v '^|---'
  mkdir -p $OUT/logs-$n && tar -xzf $OUT/$n/rgpud-logs.tar.gz -C $OUT/logs-$n 2>/dev/null
  grep -r 'tenant be scheduling' $OUT/logs-$n | sed 's/^.*logs-[a-z0-9-]*\/rgpud-//; s/ info rgpud: tenant be scheduling (fair)//; s/2026-[0-9T:.-]*//; s/ms device time.*chained/ms, chained/'
  rm -rf $OUT/logs-$n $OUT/$n
}
M=native,fair,fair+shared
for round in 1 2; do
  for c in old new; do
    run .carry-$c b30d2-$c-$round --scenarios mx_lc_poisson_370,mx_be_brief,mx_poisson_370_brief --be-brief-ms 0.03 --modes $M
  done
done
for c in old new; do
  run .carry-$c b30d8-$c --scenarios mx_lc_poisson_370,mx_be_brief,mx_poisson_370_brief --be-brief-ms 0.03 --be-depth 8 --modes $M
  run .carry-$c mem-$c --scenarios mx_lc_poisson_370,mx_poisson_370_membound,mx_pareto_370_brief,mx_lc_pareto_370 --modes fair,fair+shared
done
