#!/usr/bin/env bash
# Session 19, call 4 (carries as call 3): (1) stamps of the matrix's Poisson 50 us LC tenant
# alone under fair with the new build (its p99 read 1.39x native in call 3 against 1.26x
# old); (2) the LC-alone cells again, old / new; (3) sparse arrivals (--lc-gap-ms 40), old /
# new, against native.
set -u
O=$OUT
[ -d .carry-old/lib ] || cp -r .carry-new/lib .carry-old/lib
C=$(cd .carry-new && pwd)
mkdir -p $O/st
cell=mx_lc_poisson_50
RGPU_STAMPS=$O/st/$cell timeout 100 bash bench/sharing_on_device.sh .carry-new $O/st-run --matrix \
  --scenarios $cell --modes fair --duration 3 --timeout 25 > /dev/null 2>&1
echo "stamps rc=$?"
files=($(ls -S $O/st/$cell.* 2>/dev/null))
for a in "${files[@]}"; do for b in "${files[@]}"; do [ "$a" = "$b" ] && continue
  python3 $C/stamps.py $a $b 700 > $O/join-$(basename $a)-$(basename $b).txt 2>&1 && echo "joined $a $b"
done; done
for v in old new; do
  timeout 150 bash bench/sharing_on_device.sh .carry-$v $O/mx-$v --matrix \
    --scenarios mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_bursty_370,mx_lc_pareto_370,mx_lc_poisson_50 \
    --modes native,fair --duration 3 --timeout 25 > /dev/null 2>&1
  echo "mx $v rc=$?"
done
for v in old new; do
  timeout 150 bash bench/sharing_on_device.sh .carry-$v $O/sparse-$v --matrix --lc-gap-ms 40 \
    --scenarios mx_lc_periodic_370,mx_lc_poisson_370,mx_lc_poisson_50 \
    --modes native,fair --duration 6 --timeout 25 > /dev/null 2>&1
  echo "sparse $v rc=$?"
done
for m in mx-old mx-new sparse-old sparse-new; do rm -f $O/$m/device-log.txt $O/$m/progress.txt $O/$m/sharing.md; done
cd $O && tar czf st.tar.gz st st-run join-* && rm -rf st st-run join-*
