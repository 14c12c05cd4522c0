#!/usr/bin/env bash
# The integration tests whose clients are this project's own programs, built with ASan and
# UBSan into build-asan/ (rgpud, the ICD, api_test, matmul, security_test, shared_test, rgpu),
# and the scheduler and session unit tests (scheduler_test, session_test: seconds), and api_test
# through rgpud's launch thread (alone, and two at once under fair). Any
# sanitizer report fails the test that triggered it. Leaks inside PoCL and the ICD loader
# (third-party code) are suppressed by tests/lsan.supp; nothing of rgpu's is.
#   scripts/test_asan.sh
set -eu
cd "$(dirname "$0")/.."
build=${RGPU_ASAN_BUILD:-build-asan}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRGPU_SANITIZE=ON \
  -DRGPU_BUILD_LAB=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target rgpud rgpu-icd rgpu api_test matmul security_test \
  shared_test scheduler_test session_test
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:exitcode=23
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
cd "$build"
ctest --output-on-failure -j 2 --timeout 600 \
  -R '^(api_rgpu_unix|api_rgpu_tcp|clients_concurrent_and_killed|sliced_api_fair|security_asan|shared_rgpu_unix|shared_rgpu_tcp|scheduler_[0-3]|session_handlers|launch_thread_api_unix|launch_thread_api_fair_two_at_once)$'
