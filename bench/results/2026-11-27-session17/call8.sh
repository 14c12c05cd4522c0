#!/usr/bin/env bash
# Session 17, call 8 (device tool, carry .carry-new .carry-head): requests (a kernel, then a
# 4-byte blocking read) of ccec5e0 (new) against HEAD 2c85128 (old) under one benchmark
# binary, alternating twice: did the heap settings cost small requests anything?
set -u
N=.carry-new
O=/tmp/c-old
cp -r .carry-new $O && cp .carry-head/server/rgpud $O/server/ && cp .carry-head/client/librgpu-icd.so $O/client/
echo 2c85128 > $O/COMMIT
mkdir -p $OUT/req
for r in 1 2; do
  for b in old new; do
    c=$N; [ $b = old ] && c=$O
    timeout 140 bash bench/on_device.sh $c $OUT/req/$b$r --tasks sync,requests --no-links --iterations 1500 \
      --request-us 10,50,370 > /dev/null 2>&1
    echo "$b$r rc=$?"
    sed -n '/^## Requests/,/^Where the time/p' $OUT/req/$b$r/overhead.md | grep -E "^\| [0-9]"
  done
done
cd $OUT && tar czf req.tar.gz req && rm -rf req
