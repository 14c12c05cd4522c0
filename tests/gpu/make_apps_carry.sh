#!/usr/bin/env bash
# Builds the folder that tests/gpu/apps_on_device.sh needs on a GPU host (run it here, then
# carry the folder): rgpud and the ICD from a Release build, clpeak, hashcat as a portable
# folder (its binary beside its OpenCL kernels, so that it finds them anywhere), and every
# shared library they use that is not glibc's or libstdc++'s. About 50 MB.
#
#   tests/gpu/make_apps_carry.sh CARRY      (from the repository root; e.g. .carry-apps)
#
# CARRY_BUILD=DIR takes rgpud and the ICD from that build instead (e.g. build, to try it here).
# CARRY_APPS (default "clpeak hashcat") picks the programs; "opencv" adds rgpu-opencv-umat
# (OpenCV's C++ API, tests/apps/opencv_umat.cpp) with its libraries (about 27 MB), and
# "conformance" adds tests/conformance_test and tests/image_test (for conformance_on_device.sh).
# A device call carries at most 64 MiB: take hashcat or opencv, not both.
set -eu
C=$1
build=${CARRY_BUILD:-build-carry}
if [ -z "${CARRY_BUILD:-}" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRGPU_BUILD_LAB=OFF >/dev/null
  ninja -C "$build" rgpud rgpu-icd >/dev/null
fi
apps=" ${CARRY_APPS:-clpeak hashcat} "
rm -rf "$C" && mkdir -p "$C"/{server,client,icd,bin,lib}
cp "$build/server/rgpud" "$C/server/" && cp "$build/client/librgpu-icd.so" "$C/client/"
cp /usr/bin/clinfo "$C/bin/"
[[ $apps != *" clpeak "* ]] || cp /usr/bin/clpeak "$C/bin/"
if [[ $apps == *" hashcat "* ]]; then
  mkdir -p "$C/hashcat/modules"
  cp /usr/bin/hashcat "$C/hashcat/"
  cp -r /usr/share/hashcat/OpenCL /usr/share/hashcat/hashcat.hcstat2 "$C/hashcat/"
  # The modules of the hash modes tests/apps/hashcat_test.sh uses (all of them are 80 MB).
  cp /usr/lib/hashcat/modules/module_{00000,01400,03200}.so "$C/hashcat/modules/"
fi
[[ $apps != *" opencv "* ]] || cp "$build/tests/rgpu-opencv-umat" "$C/bin/"
if [[ $apps == *" conformance "* ]]; then
  mkdir -p "$C/tests" && cp "$build/tests/conformance_test" "$build/tests/image_test" "$C/tests/"
fi
strip "$C/server/rgpud" "$C/client/librgpu-icd.so" "$C"/bin/rgpu-* "$C"/tests/* 2>/dev/null || true
for f in "$C/server/rgpud" "$C/client/librgpu-icd.so" "$C"/bin/* "$C"/tests/* "$C"/hashcat/hashcat; do
  [ -f "$f" ] && ldd "$f" | awk '/=> \// {print $3}'
done | sort -u | grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
  xargs -r cp -L -t "$C/lib/"
git rev-parse --short HEAD >"$C/COMMIT"
du -sh "$C"
