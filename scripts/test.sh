#!/usr/bin/env bash
# The quick start's second command: installs what is missing, builds, and runs every test
# (unit, integration through a real rgpud and the real ICD loader, CLBlast, pyopencl, TLS,
# Prometheus), then the fuzz target and the ASan/UBSan build of the integration tests. Before
# the tests, clang-tidy's checks over rgpu's own code (scripts/tidy.sh).
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
build=${RGPU_BUILD:-build}
# Style without review: clang-tidy's checks (.clang-tidy) over server/, client/, proto/.
scripts/tidy.sh "$build"
(cd "$build" && ctest --output-on-failure -j 2 --timeout 900)
# Hostile input (docs/security.md): the libFuzzer target for 60 s, then the integration tests
# whose clients are our own programs again, built with ASan and UBSan.
scripts/fuzz.sh "${RGPU_FUZZ_SECONDS:-60}"
scripts/test_asan.sh
