#!/usr/bin/env bash
# Session 17, call 7 (device tool, carry .carry-new .carry-head): the launch rate of ccec5e0
# (new) against HEAD 2c85128 (old) under one benchmark binary, alternating three times.
set -u
N=.carry-new
O=/tmp/c-old
cp -r .carry-new $O && cp .carry-head/server/rgpud $O/server/ && cp .carry-head/client/librgpu-icd.so $O/client/
echo 2c85128 > $O/COMMIT
mkdir -p $OUT/rate
for r in 1 2 3; do
  for b in old new; do
    c=$N; [ $b = old ] && c=$O
    timeout 120 bash bench/on_device.sh $c $OUT/rate/$b$r --tasks async --no-links --async-launches 100000 \
      --async-rounds 3 > /dev/null 2>&1
    echo "$b$r rc=$?"
    grep -A6 "^## Asynchronous" $OUT/rate/$b$r/overhead.md | tail -3
  done
done
cd $OUT && tar czf rate.tar.gz rate && rm -rf rate
