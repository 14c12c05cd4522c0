#!/usr/bin/env bash
# Session 38, call 9 (carry as call 5): four `tiny` loops two deep under fair, with the clients'
# waits spinning 10 ms (the default on 16 CPUs; a tenant waits about three quanta, 24 ms, for
# its turn, so it is asleep when its turn begins) and 30 ms (awake): whether the cost per change
# of turn is the woken client's.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for spin in 10000 30000 10000 30000; do
  RGPU_SPIN_US=$spin timeout 60 bash bench/sharing_on_device.sh .carry-new $OUT/s$spin --matrix \
    --scenarios mx_equal4_tiny --be-depth 2 --be-kinds tiny --modes fair \
    --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 > $OUT/s.log 2>&1
  echo "RGPU_SPIN_US=$spin rc=$? $(grep -E '^\| tiny' $OUT/s$spin/sharing.md)"
done
rm -f $OUT/*/device-log.txt $OUT/*/progress.txt $OUT/*/rgpud-logs.tar.gz $OUT/*.log $OUT/*/sharing.json
