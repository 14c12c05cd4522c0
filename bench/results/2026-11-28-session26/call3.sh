#!/usr/bin/env bash
# Session 26, call 3 (carry .carry-new: call 1 plus direct launches harvested in batches by the dispatcher): the `tiny` BE tenant alone through rgpud
# with request stamps, two rounds, with the tail of the loop's turns (bench/stamps_waits.py);
# the raw stamp files come back in st-*.tar.gz.
set -u
N=.carry-new
for r in a b; do
  rm -rf /tmp/st && mkdir -p /tmp/st
  RGPU_STAMPS=/tmp/st/s timeout 150 bash bench/sharing_on_device.sh $N $OUT/tiny-$r --matrix \
    --scenarios mx_be_tiny --modes native,fair --duration 2 --timeout 25 > /dev/null 2>&1
  echo "tiny-$r rc=$?"; grep -A4 'solo runs' $OUT/tiny-$r/sharing.md | grep '^|' | grep -v '^|---'
  big=$(ls -S /tmp/st | head -2)
  c=""; s=""
  for f in $big; do if grep -q '^20 ' /tmp/st/$f; then c=/tmp/st/$f; else s=/tmp/st/$f; fi; done
  python3 bench/stamps_waits.py $c $s | tee $OUT/tiny-$r.md
  mkdir -p /tmp/keep && cp $c /tmp/keep/client-$r && cp $s /tmp/keep/server-$r
  rm -rf $OUT/tiny-$r
done
cd /tmp && tar czf $OUT/st.tar.gz keep && cd - > /dev/null
# without stamps: fifo and fair beside native, two rounds
for p in 1 2; do
  timeout 150 bash bench/sharing_on_device.sh $N $OUT/plain$p --matrix --scenarios mx_be_tiny \
    --modes native,fair,fifo --duration 2 --timeout 25 > /dev/null 2>&1
  echo "plain$p rc=$?"; grep -A4 "solo runs" $OUT/plain$p/sharing.md | grep "^|" | grep -v "^|---"
  rm -rf $OUT/plain$p/device-log.txt $OUT/plain$p/progress.txt $OUT/plain$p/sharing.json
done
