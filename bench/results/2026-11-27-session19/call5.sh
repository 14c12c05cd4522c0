#!/usr/bin/env bash
# Session 19, call 5 (carry .carry-new = 90c641e): the documented "Latest results" command
# (docs/performance.md) and the whole workload matrix (docs/scheduling.md; modes native,
# fair, fair+shared, 2 s per run), one H200 run each, for the docs.
set -u
N=.carry-new
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
timeout 250 bash bench/on_device.sh $N $OUT/ovh --iterations 5000 --async-launches 100000 \
  --max-bytes 256M --matmul-budget 1 --link-delay-ms 0.5,5,25 --worker-timeout 150 \
  --request-us 10,50,370,2000,10000 > $OUT/ovh.log 2>&1
echo "ovh rc=$?"
timeout 330 bash bench/sharing_on_device.sh $N $OUT/mx --matrix --modes native,fair,fair+shared \
  --duration 2 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
cd $OUT && tar czf res.tar.gz ovh mx ovh.log && rm -rf ovh mx
