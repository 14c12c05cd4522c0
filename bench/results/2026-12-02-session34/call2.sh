#!/usr/bin/env bash
# Session 34, call 2 (carry .carry-new, 033bee8). Request stamps (RGPU_STAMPS, bench/stamps.py)
# of an LC tenant alone, bursty and periodic 370 us, under fair+shared, fair and fifo: where
# the time goes that rgpud's own trace (call 1) does not see. One invocation per mode and
# scenario, so that each has one rgpud file and one client file.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
W=/tmp/c2 && rm -rf $W && mkdir -p $W
for mode in fair+shared fifo fair; do
  for sc in mx_lc_bursty_370 mx_lc_periodic_370; do
    tag=${mode/+/-}-$sc
    mkdir -p $W/st-$tag
    RGPU_STAMPS=$W/st-$tag/s timeout 100 bash bench/sharing_on_device.sh .carry-new $W/$tag --matrix \
      --modes native,$mode --scenarios $sc --solo-repeats 1 --duration 2.5 --timeout 25 > $W/$tag.log 2>&1
    echo "== $tag rc=$? $(grep -E '^\| `mx_lc' $W/$tag/sharing.md | head -1)"
    grep -E "^\| $mode \| mx_" $W/$tag/sharing.md | head -2
    ls $W/st-$tag
    # rgpud's file is the one with FRAME_IN (13) stamps; the client's has LAUNCH_CALL (1).
    srv=$(grep -l '^13 ' $W/st-$tag/s.* | head -1)
    cli=$(grep -L '^13 ' $W/st-$tag/s.* | xargs grep -l '^1 ' | tail -1)
    python3 bench/stamps.py $cli $srv 600
  done
done
(cd /tmp && tar czf $OUT/c2.tar.gz c2)
