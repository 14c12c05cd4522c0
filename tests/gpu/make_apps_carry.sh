#!/usr/bin/env bash
# Builds the folder that tests/gpu/apps_on_device.sh needs on a GPU host (run it here, then
# carry the folder): rgpud and the ICD from a Release build, clpeak, hashcat as a portable
# folder (its binary beside its OpenCL kernels, so that it finds them anywhere), and every
# shared library they use that is not glibc's or libstdc++'s. About 50 MB.
#
#   tests/gpu/make_apps_carry.sh CARRY      (from the repository root; e.g. .carry-apps)
#
# CARRY_BUILD=DIR takes rgpud and the ICD from that build instead (e.g. build, to try it here).
set -eu
C=$1
build=${CARRY_BUILD:-build-carry}
if [ -z "${CARRY_BUILD:-}" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRGPU_BUILD_LAB=OFF >/dev/null
  ninja -C "$build" rgpud rgpu-icd >/dev/null
fi
rm -rf "$C" && mkdir -p "$C"/{server,client,icd,bin,lib,hashcat}
cp "$build/server/rgpud" "$C/server/" && cp "$build/client/librgpu-icd.so" "$C/client/"
cp /usr/bin/clpeak /usr/bin/clinfo "$C/bin/"
cp /usr/bin/hashcat "$C/hashcat/"
cp -r /usr/share/hashcat/OpenCL /usr/share/hashcat/hashcat.hcstat2 "$C/hashcat/"
# The modules of the hash modes tests/apps/hashcat_test.sh uses (all of them are 80 MB).
mkdir -p "$C/hashcat/modules"
cp /usr/lib/hashcat/modules/module_{00000,01400,03200}.so "$C/hashcat/modules/"
strip "$C/server/rgpud" "$C/client/librgpu-icd.so"
for f in "$C/server/rgpud" "$C/client/librgpu-icd.so" "$C/bin/clpeak" "$C/hashcat/hashcat"; do
  ldd "$f" | awk '/=> \// {print $3}'
done | sort -u | grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
  xargs -r cp -L -t "$C/lib/"
git rev-parse --short HEAD >"$C/COMMIT"
du -sh "$C"
