#!/usr/bin/env bash
# Session 28, call 3: round trips and requests (a kernel of 10 us to 2 ms, then a 4-byte
# blocking read; after a pause and back to back), old (b700dc8: .carry-old) against new
# (.carry-new), alternating twice: the new ICD writes the first request of a burst over TCP at
# once, which must not cost requests anything; then bursts of 100 launches, nine runs per
# path, old and new. Every run's files go into one archive (the device tool returns few files).
set -u
for d in bench lib icd; do [ -e .carry-old/$d ] || cp -r .carry-new/$d .carry-old/; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c3 && rm -rf $W && mkdir -p $W
for round in 1 2; do
  for v in old new; do
    d=$W/req-r$round-$v
    timeout 200 bash bench/on_device.sh .carry-$v $d --tasks sync,requests --iterations 2000 \
      --request-us 10,50,370,2000 --no-links --worker-timeout 150 > /dev/null 2>&1
    echo "== req round $round $v rc=$?"
    grep -A10 '^## Synchronous' $d/overhead.md | grep '^|'
    grep -A8 '^## Requests' $d/overhead.md | grep '^|'
    grep -A8 '^Back to back' $d/overhead.md | grep '^|'
  done
done
for v in old new; do
  d=$W/async100-$v
  timeout 200 bash bench/on_device.sh .carry-$v $d --tasks async --async-launches 100 --async-rounds 9 \
    --no-links --worker-timeout 150 > /dev/null 2>&1
  echo "== async100 $v rc=$?"; grep -A6 '^## Asynchronous' $d/overhead.md | grep '^|'
done
rm -f $W/*/rgpud-*.log $W/*/progress.txt
(cd /tmp && tar czf $OUT/c3.tar.gz c3)
