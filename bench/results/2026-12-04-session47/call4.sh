#!/usr/bin/env bash
# Session 47, call 4 (carry .carry-new of 041f35c, with rgpu-bench-overhead): issue 12's
# launch rate in bursts of 100 (three invocations of three alternating rounds: nine runs a
# path) and the bandwidth task up to 256 MiB (three rounds, raw floors beside).
set -o pipefail
for i in 1 2 3; do
  timeout 100 bash bench/on_device.sh .carry-new $OUT/b100-$i --tasks async --no-links \
    --async-launches 100 --async-rounds 3 --worker-timeout 60 > $OUT/b100-$i.log 2>&1
  grep -A6 "Asynchronous launches" $OUT/b100-$i/overhead.md
  cp $OUT/b100-$i/overhead.json $OUT/b100-$i.json; rm -rf $OUT/b100-$i
done
timeout 300 bash bench/on_device.sh .carry-new $OUT/bw --tasks bandwidth --no-links \
  --max-bytes 256M --worker-timeout 150 > $OUT/bw.log 2>&1
grep -A14 "Bandwidth" $OUT/bw/overhead.md
mv $OUT/bw/overhead.json $OUT/bw.json; mv $OUT/bw/overhead.md $OUT/bw.md; rm -rf $OUT/bw
