#!/usr/bin/env bash
# Bulk transfers on a GPU machine (issue 12, outcomes 3 and 4): the overhead benchmark's
# bandwidth task twice, with the Unix socket client's data through a shared region (the
# default) and through the socket (RGPU_SHM=0); TCP is pipelined in both. A build carried in
# as for bench/on_device.sh (docs/performance.md, "Bulk transfers").
#
#   bench/bulk_on_device.sh CARRIED_BUILD OUTDIR [more rgpu-bench-overhead options...]
#
# Writes OUTDIR/shm/ and OUTDIR/socket/ (overhead.json, overhead.md, rgpud logs each).
set -uo pipefail
carry=$1
out=$2
shift 2
here=$(dirname "$0")
opts=(--tasks bandwidth --max-bytes 256M --no-links --worker-timeout 200 "$@")
"$here/on_device.sh" "$carry" "$out/shm" "${opts[@]}"
RGPU_SHM=0 "$here/on_device.sh" "$carry" "$out/socket" "${opts[@]}"
for run in shm socket; do
  echo "== $run"
  grep -A13 "Bandwidth: writes\|Bandwidth: reads" "$out/$run/overhead.md" | grep "^|"
done
