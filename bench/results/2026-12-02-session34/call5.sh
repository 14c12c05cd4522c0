#!/usr/bin/env bash
# Session 34, call 5 (carry .carry-new, 031e201: rgpud as 033bee8, plus call 4's sharing.json
# as .carry-new/native-sharing.json).
# A: the cells whose call-4 run the host held back (HostStallMeter: 3 or more wake-ups over
#    1 ms late, hypervisor steal of 30-990 ms a run) again, under fair+shared and fair, against
#    call 4's native runs (--baseline).
# B: one tenant alone: every solo shape under native, fifo, fair and fair+shared (issue 15: fair
#    within 3% of fifo); native twice.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
A=mx_periodic_370_short,mx_periodic_370_membound,mx_periodic_370_long,mx_periodic_370_opaque,mx_periodic_370_brief,mx_periodic_370_tiny
A=$A,mx_poisson_370_short,mx_poisson_370_membound,mx_poisson_370_long,mx_poisson_370_opaque
A=$A,mx_pareto_370_membound,mx_pareto_370_long,mx_pareto_370_opaque,mx_pareto_370_brief,mx_pareto_370_tiny
A=$A,mx_poisson_50_short,mx_poisson_50_membound,mx_poisson_50_long,mx_poisson_50_opaque,mx_poisson_2000_short
A=$A,mx_be_tiny,mx_be_short,mx_be_long,mx_be_brief
timeout 250 bash bench/sharing_on_device.sh .carry-new $OUT/again --matrix --modes fair+shared,fair \
  --baseline .carry-new/native-sharing.json --scenarios $A --duration 2.5 --timeout 25 > $OUT/again.log 2>&1
echo "again rc=$?"
tail -2 $OUT/again.log
S=mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50,mx_lc_poisson_2000
S=$S,mx_be_short,mx_be_membound,mx_be_long,mx_be_opaque,mx_be_brief,mx_be_tiny
timeout 320 bash bench/sharing_on_device.sh .carry-new $OUT/solo --matrix \
  --modes native,fifo,fair,fair+shared --scenarios $S --solo-repeats 2 --duration 2.5 --timeout 25 > $OUT/solo.log 2>&1
echo "solo rc=$?"
tail -2 $OUT/solo.log
grep -E '^\| `mx_' $OUT/solo/sharing.md | head -12
