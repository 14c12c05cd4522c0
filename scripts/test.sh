#!/usr/bin/env bash
# The quick start's second command: installs what is missing, builds, and runs every test
# (unit, integration through a real rgpud and the real ICD loader, CLBlast, pyopencl).
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
build=${RGPU_BUILD:-build}
cd "$build"
ctest --output-on-failure -j 2 --timeout 900
