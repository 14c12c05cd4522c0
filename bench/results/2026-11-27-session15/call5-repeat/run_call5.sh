#!/usr/bin/env bash
# Session 15, call 5: call 4's two outlier cells (periodic 370 us beside short and beside
# membound: new fair 10.6x and 7.0x, old 2.7x and 1.7x) and two LC-alone cells, new and old
# build alternating three times, against call 4's native runs (--baseline).
#   bash .carry-s15/run_call5.sh .carry-s15 .carry-old $OUT
NEW=$(cd $1 && pwd) OLD=$(cd $2 && pwd) O=$3
mkdir -p $O
cells=mx_lc_periodic_370,mx_lc_bursty_370,mx_periodic_370_short,mx_periodic_370_membound
for i in 1 2 3; do
  for x in new old; do
    C=$NEW; [ $x = old ] && C=$OLD
    bash bench/sharing_on_device.sh $C $O/$x$i --matrix --modes fair --scenarios $cells --duration 2 --timeout 25 \
      --baseline $NEW/native-sharing.json > /dev/null 2>&1
    echo "== $x $i"; grep -A 8 "^## Matrix (" $O/$x$i/sharing.md | grep "^| \`"
    rm -f $O/$x$i/rgpud-logs.tar.gz $O/$x$i/device-log.txt $O/$x$i/progress.txt
  done
done
cd $O && tar czf runs.tar.gz new? old? && rm -rf new? old?
