#!/usr/bin/env bash
# Stages what bench/on_device.sh, bench/bulk_on_device.sh and bench/sharing_on_device.sh need
# on a GPU host whose image has no spdlog or CLI11 (the device tool's): the benchmarks and
# probes, rgpud and librgpu-icd from a build tree, stripped, and the shared libraries they
# use that are not glibc's or libstdc++'s. About 25 MB.
#
#   bench/make_carry.sh CARRY [BUILD]     (from the repository root; BUILD defaults to build)
#
# RGPUD_FROM=DIR and ICD_FROM=DIR take rgpud and the ICD from another build tree, so that two
# versions of rgpu run under one benchmark binary (a before/after comparison in one call).
set -eu
C=$1
build=${2:-build}
rm -rf "$C" && mkdir -p "$C"/{bench,server,client,icd,lib}
for b in rgpu-bench-overhead rgpu-bench-sharing rgpu-probe-driver rgpu-probe-reads rgpu-probe-switch rgpu-probe-switch-cuda; do
  [ -x "$build/bench/$b" ] && cp "$build/bench/$b" "$C/bench/"
done
cp "${RGPUD_FROM:-$build}/server/rgpud" "$C/server/"
cp "${ICD_FROM:-$build}/client/librgpu-icd.so" "$C/client/"
strip "$C"/bench/* "$C/server/rgpud" "$C/client/librgpu-icd.so"
. "$(dirname "$0")/../scripts/carry_libs.sh"
carry_libs "$C/lib" "$C"/bench/* "$C/server/rgpud" "$C/client/librgpu-icd.so"
git -C "${RGPUD_FROM:-$build}" rev-parse --short HEAD >"$C/COMMIT" 2>/dev/null || true
du -sh "$C"
