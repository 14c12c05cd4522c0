#!/usr/bin/env bash
# Session 22, call 2 (carry .carry-new as call 1): best-effort kernels of 0.2 and 0.8 ms (the
# issue-4 scenarios with --be-waves 2 and 8: preemptible runs, not slices), native, fifo, fair
# and fair without --chain-held, 2 s runs: how much a held launch's wait for the one before
# costs a tenant of short kernels, and whether equal tenants keep the device busy.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for w in 2 8; do
  timeout 250 bash bench/sharing_on_device.sh .carry-new $OUT/w$w --scenarios lc_solo,be_solo,lc_be,equal2 \
    --be-waves $w --modes native,fifo,fair,fair/--chain-held=0 --duration 2 --timeout 25 > /dev/null 2>&1
  echo "w$w rc=$?"
  grep -A12 '^## Sharing' $OUT/w$w/sharing.md | grep '^|' | head -12
  grep '| \(native\|fifo\|fair\)' $OUT/w$w/sharing.md | grep -v '^| cell' | head -30
  mkdir -p $OUT/logs-w$w && tar -xzf $OUT/w$w/rgpud-logs.tar.gz -C $OUT/logs-w$w 2>/dev/null
  grep -rh 'scheduling (fair)' $OUT/logs-w$w | sed 's/^.*rgpud: //' | head -12
  rm -f $OUT/w$w/device-log.txt $OUT/w$w/progress.txt
done
