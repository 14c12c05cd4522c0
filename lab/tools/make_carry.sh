#!/usr/bin/env bash
# Stages what lab/tools/on_device.sh needs on a GPU host whose image lacks rgpud's build
# dependencies (the device tool's): rgpud and librgpu-icd from a build tree, stripped, in
# CARRY with the shared libraries they use that are not glibc's or libstdc++'s (ocl-icd's
# libOpenCL.so.1 among them), and in .lab-deps/include the headers the lab's own build needs.
#
#   lab/tools/make_carry.sh [CARRY] [BUILD]   (from the repository root; .carry-lab, build)
#
# RGPUD_FROM=DIR takes rgpud from another build tree, so that two versions of rgpud run under
# one lab build (a before/after comparison in one device call: LAB_CARRY=CARRY for each).
set -eu
C=${1:-.carry-lab}
build=${2:-build}
rm -rf "$C" && mkdir -p "$C/lib"
cp "${RGPUD_FROM:-$build}/server/rgpud" "$build/client/librgpu-icd.so" "$C/"
strip "$C/rgpud" "$C/librgpu-icd.so"
. "$(dirname "$0")/../../scripts/carry_libs.sh"
carry_libs "$C/lib" "$C/rgpud" "$C/librgpu-icd.so"
git -C "${RGPUD_FROM:-$build}" rev-parse --short HEAD >"$C/COMMIT" 2>/dev/null || true
mkdir -p .lab-deps/include
for h in toml++ CLI nlohmann CL; do cp -r "/usr/include/$h" .lab-deps/include/; done
du -sh "$C" .lab-deps
