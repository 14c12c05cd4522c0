#!/usr/bin/env bash
# Session 35, call 4 (carry .carry-new): the whole matrix under fair+shared with the
# accounting fix (a launch behind its tenant's held work not taken as its kernel's cost), rgpud
# at debug (each session's usage, and how many launches NVIDIA timed without QUEUED and
# SUBMIT), against session 34's call 4 native runs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 500 bash bench/sharing_on_device.sh .carry-new $OUT/mx --matrix \
  --modes fair+shared --baseline .carry-new/native-sharing.json --duration 2.5 --timeout 25 \
  --rgpud-log-level debug > $OUT/mx.log 2>&1
echo "mx rc=$?"
tail -2 $OUT/mx.log
grep -E "meet both" $OUT/mx/sharing.md | head
cd $OUT/mx && tar xzf rgpud-logs.tar.gz && grep -h "timed without\|without QUEUED" rgpud-*.log | tail -12 | cut -c1-300
grep -h "so far" rgpud-*.log | cut -c1-60 | wc -l
rm -f rgpud-fair*.log
