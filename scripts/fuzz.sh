#!/usr/bin/env bash
# Builds the libFuzzer target (tests/fuzz) with clang-14, ASan and UBSan into build-fuzz/
# and runs it for SECONDS (default 60). Fails on any crash, leak, sanitizer report or
# leftover object. Skips, with a message, where clang-14's libFuzzer is not installed.
#   scripts/fuzz.sh [SECONDS] [extra libFuzzer flags...]
set -eu
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
build=${RGPU_FUZZ_BUILD:-build-fuzz}
if ! command -v clang++-14 >/dev/null ||
   ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
     clang++-14 -fsanitize=fuzzer -x c++ - -o /dev/null 2>/dev/null; then
  echo "fuzz: clang-14 with -fsanitize=fuzzer is not available; skipped" >&2
  exit 0
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DRGPU_FUZZ=ON -DRGPU_SANITIZE=ON -DRGPU_BUILD_LAB=OFF \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" >/dev/null
cmake --build "$build" --target session_fuzz -j "$(nproc)"
# New inputs go to $build/corpus; tests/fuzz/corpus holds the seeds (a long run's corpus,
# minimised with -merge=1), so that a short run starts deep in the handlers.
corpus="$build/corpus"
mkdir -p "$corpus"
# -rss_limit_mb: the fake backend bounds buffers at 64 MiB; a session needing more is a finding.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$build/tests/fuzz/session_fuzz" -max_total_time="$seconds" -rss_limit_mb=2048 \
  -max_len=8192 -timeout=20 -print_final_stats=1 "$@" "$corpus" tests/fuzz/corpus
