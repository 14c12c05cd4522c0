#!/usr/bin/env bash
# Session 20, call 4: the blobs of writes and buffer creations of 1 MiB and more over TCP
# received straight into pinned staging, and the device copying from there (new), beside the
# pinned reads of call 3; against 681cf2e (old). Overhead benchmark, bandwidth to 64 MiB
# (three rounds each, raw floors beside) and the matrix multiply (256-1024), old / new
# alternating twice, then new with --pinned-staging-mib 0 once.
# Carries: .carry-new (this build), .carry-old (681cf2e, without lib/).
set -u
O=$OUT
[ -d .carry-old/lib ] || cp -r .carry-new/lib .carry-old/lib
run() {  # run LABEL CARRY [rgpud args...]
  local label=$1 carry=$2; shift 2
  local extra=(); for a in "$@"; do extra+=("--rgpud-arg=$a"); done
  timeout 130 bash bench/on_device.sh .carry-$carry $O/bw-$label --tasks bandwidth,matmul --max-bytes 64M \
    --matmul-sizes 256 512 1024 --matmul-budget 1 --no-links --worker-timeout 120 "${extra[@]}" > /dev/null 2>&1
  echo "bw $label rc=$?"
  grep -A13 'Bandwidth: writes' $O/bw-$label/overhead.md | grep -E '^\| (1 MiB|4 MiB|16 MiB|64 MiB)'
  grep -A13 'Bandwidth: reads' $O/bw-$label/overhead.md | grep -E '^\| (1 MiB|4 MiB|16 MiB|64 MiB)'
  grep -A9 'Matrix multiply, end' $O/bw-$label/overhead.md | grep -E '^\| (512|1024) '
  grep -A30 'Where a multiply' $O/bw-$label/overhead.md | grep -E '^\| (512|1024) \| rgpu_tcp'
}
run old-1 old; run new-1 new; run old-2 old; run new-2 new; run nopin-1 new --pinned-staging-mib=0
cd $O && tar czf runs.tar.gz bw-* && rm -rf bw-*
