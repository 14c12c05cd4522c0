#!/usr/bin/env bash
# Session 18, call 7 (carry .carry-new = 099c5cf, plus bench/stamps.py at its top): request
# stamps of the matrix's LC tenant alone under fair, bursty and periodic arrivals (rgpud and
# the tenant inherit RGPU_STAMPS from the benchmark), one benchmark run per cell.
set -u
C=$(cd .carry-new && pwd)
mkdir -p $OUT/st
for cell in mx_lc_bursty_370 mx_lc_periodic_370; do
  RGPU_STAMPS=$OUT/st/$cell timeout 120 bash bench/sharing_on_device.sh .carry-new $OUT/$cell --matrix \
    --scenarios $cell --modes native,fair --duration 2 --timeout 25 > /dev/null 2>&1
  echo "$cell rc=$?"
  ls $OUT/st
  files=($(ls -S $OUT/st/$cell.* 2>/dev/null))
  # rgpud's file and the tenant's: the tenant's has the launch-call points; try both orders.
  for a in "${files[@]}"; do for b in "${files[@]}"; do [ "$a" = "$b" ] && continue
    python3 $C/stamps.py $a $b 500 > $OUT/join-$cell-$(basename $a)-$(basename $b).txt 2>&1 && echo "joined $a $b"
  done; done
done
grep -E "TOTAL|request p50" $OUT/join-* | head
cd $OUT && tar czf st.tar.gz st mx_lc_* join-* && rm -rf st mx_lc_* join-*
