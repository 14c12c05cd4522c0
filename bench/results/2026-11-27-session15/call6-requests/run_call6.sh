#!/usr/bin/env bash
# Session 15, call 6: the overhead benchmark's requests (a kernel of 10 us to 2 ms, then a
# 4-byte blocking read, after 0.2-1 ms pauses) and round trips, HEAD 363adbb (old) and this
# session's build (new), alternating twice in one call.
#   bash .carry-s15/run_call6.sh .carry-s15 .carry-old $OUT
NEW=$1 OLD=$2 O=$3
for i in 1 2; do
  for x in old new; do
    C=$NEW; [ $x = old ] && C=$OLD
    bash bench/on_device.sh $C $O/$x$i --tasks sync,requests --no-links --iterations 1500 \
      --request-us 10,50,370,2000 --worker-timeout 150 > /dev/null 2>&1
    echo "== $x $i"; grep -A 9 "Requests: a kernel" $O/$x$i/overhead.md | grep "^| [0-9]"
    grep -A 8 "Synchronous round trip" $O/$x$i/overhead.md | grep "^| rgpu\|^| native"
  done
done
cd $O && tar czf runs.tar.gz old? new? && rm -rf old? new?
