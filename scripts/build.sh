#!/usr/bin/env bash
# Configures and builds rgpu into build/ (or $RGPU_BUILD).
set -eu
cd "$(dirname "$0")/.."
build=${RGPU_BUILD:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${RGPU_BUILD_TYPE:-RelWithDebInfo} ${RGPU_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$(nproc)"
