#!/usr/bin/env bash
# Session 26, call 10 (carry .carry-new = 199c618): call 9's fair+shared cells read 1-7 ms
# higher at p99 than session 25's; --gate-at-once on and off in the same run, with the BE
# kinds call 9 ran before them (long, opaque), 2 s per run.
set -u
timeout 240 bash bench/sharing_on_device.sh .carry-new $OUT/ab --matrix \
  --modes fair+shared,fair+shared/--gate-at-once=0 --duration 2 --timeout 25 \
  --scenarios mx_be_long,mx_be_opaque,mx_periodic_370_membound,mx_pareto_370_brief,mx_periodic_370_tiny,mx_poisson_50_membound \
  > /dev/null 2>&1
echo "ab rc=$?"
grep -E '^\| fair' $OUT/ab/sharing.md | grep ' lc \| be ' | cut -d'|' -f2-10
rm -f $OUT/ab/device-log.txt $OUT/ab/progress.txt
