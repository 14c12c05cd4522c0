#!/usr/bin/env bash
# The quick start's second command: installs what is missing, builds, and runs every test
# (unit, integration through a real rgpud and the real ICD loader, CLBlast, pyopencl, TLS,
# Prometheus), then the fuzz target and the ASan/UBSan build of the integration tests. Before
# the tests, clang-tidy's checks over rgpu's own code (scripts/tidy.sh) and clang-format's over
# the lines the newest commit changed (scripts/format_check.sh).
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
build=${RGPU_BUILD:-build}
# Style without review: clang-tidy's checks (.clang-tidy) over server/, client/, proto/, and
# .clang-format over the C++ lines the newest commit changed (the tree is not reformatted
# wholesale; a checkout without the commit before it, such as a shallow copy, skips this).
scripts/tidy.sh "$build"
if git rev-parse -q --verify HEAD~1 >/dev/null 2>&1; then
  scripts/format_check.sh HEAD~1
else
  echo "format_check: no parent commit in this checkout, skipped"
fi
(cd "$build" && ctest --output-on-failure -j 2 --timeout 900)
# Hostile input (docs/security.md): the libFuzzer target for 60 s, then the integration tests
# whose clients are our own programs again, built with ASan and UBSan.
scripts/fuzz.sh "${RGPU_FUZZ_SECONDS:-60}"
scripts/test_asan.sh
