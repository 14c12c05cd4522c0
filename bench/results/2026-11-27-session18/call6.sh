#!/usr/bin/env bash
# Session 18, call 6 (carry .carry-new = 099c5cf): issue 15's whole workload matrix on the H200
# with this session's build (control rings in the request path; no scheduler change), modes
# native, fair and the opt-in fair+shared, 2 s per run.
set -u
timeout 540 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix --modes native,fair,fair+shared \
  --duration 2 --timeout 25 > /dev/null 2>&1
echo "mx rc=$?"
cd $OUT && tar czf mx.tar.gz mx && rm -rf mx
