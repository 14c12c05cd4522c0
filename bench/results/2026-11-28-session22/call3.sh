#!/usr/bin/env bash
# Session 22, call 3 (carry .carry-new as call 1): the matrix's `short` BE kind made short
# (--be-short-ms 0.2, 8 work-groups per compute unit: preemptible runs of 0.2 ms launches),
# alone and beside the Poisson 370 us LC, native, fair, fair without --chain-held and
# fair+shared, 3 s runs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 250 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --scenarios mx_lc_poisson_370,mx_be_short,mx_poisson_370_short,mx_periodic_370_short,mx_lc_periodic_370 \
  --be-short-ms 0.2 --be-short-groups-per-cu 8 \
  --modes native,fair,fair/--chain-held=0,fair+shared --duration 3 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
grep -B2 -A10 'Matrix (LC p99' $OUT/mx/sharing.md | grep '^|'
grep -A8 'solo runs' $OUT/mx/sharing.md | grep '^|'
mkdir -p $OUT/logs && tar -xzf $OUT/mx/rgpud-logs.tar.gz -C $OUT/logs 2>/dev/null
grep -rh 'tenant be scheduling' $OUT/logs | sed 's/^.*rgpud: //'
rm -f $OUT/mx/device-log.txt $OUT/mx/progress.txt $OUT/mx/rgpud-logs.tar.gz
