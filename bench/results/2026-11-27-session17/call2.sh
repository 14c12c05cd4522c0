#!/usr/bin/env bash
# Session 17, call 2 (device tool, carry .carry-new .carry-head): matmul end to end, HEAD
# 2c85128's rgpud and ICD (old) against the working tree with buffer contents through the
# shared region (new), under one benchmark binary, alternating twice.
set -u
N=.carry-new
O=/tmp/c-old
cp -r .carry-new $O && cp .carry-head/server/rgpud $O/server/ && cp .carry-head/client/librgpu-icd.so $O/client/
mkdir -p $OUT/mm
for r in 1 2; do
  for b in old new; do
    c=$N; [ $b = old ] && c=$O
    timeout 200 bash bench/on_device.sh $c $OUT/mm/$b$r --tasks matmul --no-links --matmul-budget 1 \
      --matmul-sizes 64 128 256 512 1024 2048 > /dev/null 2>&1
    echo "$b$r rc=$?"
  done
done
cd $OUT && tar czf mm.tar.gz mm && rm -rf mm
