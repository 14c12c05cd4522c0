#!/usr/bin/env bash
# Session 19, call 6: the launch rate (100,000 asynchronous launches, then clFinish) of the old
# build (.carry-old: f0e2a46) and the new (.carry-new: 90c641e, which writes asynchronous
# requests straight into the control rings), alternating three times: call 5 read 0.75 of
# native over the Unix socket, the lowest since the rings.
set -u
[ -d .carry-old/lib ] || cp -r .carry-new/lib .carry-old/lib
for r in 1 2 3; do
  for v in old new; do
    timeout 60 bash bench/on_device.sh .carry-$v $OUT/async-$v-$r --tasks async --no-links \
      --async-launches 100000 --worker-timeout 50 > /dev/null 2>&1
    echo "async $v $r rc=$?"
    grep -E '^\| (native|rgpu unix|rgpu tcp) \| [0-9]+ \| [0-9.]+ \|' $OUT/async-$v-$r/overhead.md
  done
done
cd $OUT && tar czf async.tar.gz async-* && rm -rf async-*
