#!/usr/bin/env bash
# Session 43, call 3 (carry as call 2): request stamps (RGPU_STAMPS, bench/stamps.py) of the
# periodic 370 µs LC alone under fifo, fair and fair+shared, twice in alternation: call 2 read
# `fair` 20-25 µs slower at p50 than `fifo` with nothing else running. One invocation per mode
# and round, so that each has one rgpud file and one client file.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c3 && rm -rf $W && mkdir -p $W
for round in 1 2; do
  for mode in fifo fair fair+shared; do
    tag=${mode/+/-}-$round
    mkdir -p $W/st-$tag
    RGPU_STAMPS=$W/st-$tag/s timeout 100 bash bench/sharing_on_device.sh .carry-new $W/$tag --matrix \
      --modes $mode --scenarios mx_lc_periodic_370 --baseline .carry-new/native-matrix.json \
      --duration 2.5 --timeout 25 > $W/$tag.log 2>&1
    echo "== $tag rc=$? $(grep -E '^\| `mx_lc' $W/$tag/sharing.md | head -1)"
    srv=$(grep -l '^13 ' $W/st-$tag/s.* | head -1)
    cli=$(grep -L '^13 ' $W/st-$tag/s.* | xargs grep -l '^1 ' | tail -1)
    python3 bench/stamps.py $cli $srv 600 | head -30
  done
done > $OUT/stamps.txt 2>&1
cat $OUT/stamps.txt | head -150
(cd /tmp && tar czf $OUT/c3.tar.gz c3/st-*)
