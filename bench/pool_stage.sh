#!/usr/bin/env bash
# Stages what bench/pool_on_device.sh needs on a GPU machine that has neither this project's
# libraries nor etcd: rgpud, the ICD, the rgpu CLI, the test program, etcd, and every shared
# library they use beyond glibc.
#
#   bench/pool_stage.sh BUILD_DIR CARRY_DIR      (then carry CARRY_DIR, e.g. .carry-pool)
set -eu
build=$1
carry=$2
rm -rf "$carry"
mkdir -p "$carry"/{server,client,cli,tests,bin,lib}
cp "$build/server/rgpud" "$carry/server/"
cp "$build/client/librgpu-icd.so" "$carry/client/"
cp "$build/cli/rgpu" "$carry/cli/"
cp "$build/tests/pool_client" "$carry/tests/"
cp "$(command -v etcd)" "$carry/bin/"
for bin in "$carry"/server/rgpud "$carry"/client/librgpu-icd.so "$carry"/cli/rgpu "$carry"/tests/pool_client; do
  ldd "$bin" | awk '$3 ~ /^\// {print $3}'
done | sort -u | grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$carry/lib/"; done
# Debug info would take the stage past what a device run may carry (64 MiB).
strip --strip-unneeded "$carry"/server/rgpud "$carry"/client/librgpu-icd.so "$carry"/cli/rgpu "$carry"/tests/pool_client
du -sh "$carry"
