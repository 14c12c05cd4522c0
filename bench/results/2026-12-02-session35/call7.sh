#!/usr/bin/env bash
# Session 35, call 7 (carry .carry-new): do narrow pieces of a one-wave BE launch (2 work-groups
# per compute unit, ~54 us each for `brief`'s 0.2 ms wave) shorten the LC's wait beside it?
# Emulated with narrow runs forced to width 2 (--lc-narrow-width=2; they carry control words
# a plain slice would not), against fair+shared as is, alternating, twice, on the `brief`
# cells; against call 6's native runs (its sharing.json as .carry-new/native-sharing.json).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
sc=mx_periodic_370_brief,mx_poisson_370_brief,mx_bursty_370_brief,mx_pareto_370_brief,mx_poisson_50_brief,mx_poisson_2000_brief,mx_be_brief
for pass in 1 2; do
  timeout 250 bash bench/sharing_on_device.sh .carry-new $OUT/p$pass --matrix \
    --modes fair+shared,fair+shared/--lc-narrow-width=2 --baseline .carry-new/native-sharing.json \
    --duration 2.5 --timeout 25 --scenarios $sc > $OUT/p$pass.log 2>&1
  echo "pass $pass rc=$?"
  grep -E "^\| fair\+shared" $OUT/p$pass/sharing.md | grep -E "brief" | head -20
done
