#!/usr/bin/env bash
# Session 26, call 5 (carry .carry-new as call 4): is it the spinning dispatcher and watcher
# (--spin-feed) that slow the BE tenant's host steps beside the LC? Poisson 370 us + `tiny`,
# fair with and without --spin-feed, with request stamps (raw files come back).
set -u
N=.carry-new
mkdir -p /tmp/keep
for m in fair fair/--spin-feed=0 fair; do
  t=$(echo $m | tr '/=' '__' | tr -d '-')
  [ -e $OUT/$t.md ] && t=${t}2
  rm -rf /tmp/st && mkdir -p /tmp/st
  RGPU_STAMPS=/tmp/st/s timeout 150 bash bench/sharing_on_device.sh $N $OUT/$t --matrix \
    --scenarios mx_poisson_370_tiny --modes $m --duration 3 --timeout 25 > /dev/null 2>&1
  echo "$m rc=$?"; grep '^| [a-z+/=0-9-]* | mx_' $OUT/$t/sharing.md
  c=""; s=""
  for f in $(ls -S /tmp/st); do
    if grep -q '^20 ' /tmp/st/$f; then [ -z "$c" ] && c=/tmp/st/$f
    elif grep -q '^13 ' /tmp/st/$f; then [ -z "$s" ] && s=/tmp/st/$f; fi
  done
  python3 bench/stamps_waits.py $c $s | tee $OUT/$t.md
  cp $c /tmp/keep/client-$t; cp $s /tmp/keep/server-$t
  rm -rf $OUT/$t/device-log.txt $OUT/$t/progress.txt $OUT/$t/sharing.json $OUT/$t/rgpud-logs.tar.gz
done
cd /tmp && tar czf $OUT/st.tar.gz keep
