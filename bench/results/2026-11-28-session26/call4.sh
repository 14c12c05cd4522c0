#!/usr/bin/env bash
# Session 26, call 4 (carry .carry-new: call 3's build, rgpud's stamps tagged with their
# session): the `tiny` BE tenant beside the Poisson 370 us LC (the matrix's cell, two launches
# in flight) under fair and fair+shared, with request stamps; the BE session's turns
# (bench/stamps_waits.py), where its launches are held and gated.
set -u
N=.carry-new
mkdir -p /tmp/keep
for m in fair fair+shared; do
  rm -rf /tmp/st && mkdir -p /tmp/st
  RGPU_STAMPS=/tmp/st/s timeout 150 bash bench/sharing_on_device.sh $N $OUT/$m --matrix \
    --scenarios mx_poisson_370_tiny --modes $m --duration 3 --timeout 25 > /dev/null 2>&1
  echo "$m rc=$?"; grep '^| [a-z+]* | mx_' $OUT/$m/sharing.md
  c=""; s=""
  for f in $(ls -S /tmp/st); do
    if grep -q '^20 ' /tmp/st/$f; then [ -z "$c" ] && c=/tmp/st/$f
    elif grep -q '^13 ' /tmp/st/$f; then [ -z "$s" ] && s=/tmp/st/$f; fi
  done
  python3 bench/stamps_waits.py $c $s | tee $OUT/$m.md
  cp $c /tmp/keep/client-$m; cp $s /tmp/keep/server-$m
  mkdir -p $OUT/logs && tar -xzf $OUT/$m/rgpud-logs.tar.gz -C $OUT/logs 2>/dev/null
  grep -rh 'scheduling' $OUT/logs | cut -c1-400; rm -rf $OUT/logs
  rm -rf $OUT/$m/device-log.txt $OUT/$m/progress.txt $OUT/$m/sharing.json
done
cd /tmp && tar czf $OUT/st.tar.gz keep
