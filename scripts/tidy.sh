#!/usr/bin/env bash
# clang-tidy over rgpu's own code (server/, client/, proto/) with the checks in .clang-tidy;
# any finding fails. Needs a configured build tree (compile_commands.json, which the
# top-level CMakeLists.txt always writes) and clang-tidy-14 (scripts/deps.sh installs it).
#   scripts/tidy.sh [BUILD]      (default: build, or $RGPU_BUILD)
set -eu
cd "$(dirname "$0")/.."
build=${1:-${RGPU_BUILD:-build}}
if [ ! -f "$build/compile_commands.json" ]; then
  echo "tidy: $build/compile_commands.json missing (configure with scripts/build.sh first)" >&2
  exit 2
fi
files=$(ls server/*.cpp server/*/*.cpp client/*.cpp proto/*.cpp)
log=$(mktemp)
# Two files at a time: about two minutes on two cores.
if ! printf '%s\n' $files | xargs -P "$(nproc)" -n 1 clang-tidy-14 -p "$build" --quiet >"$log" 2>&1; then
  grep -E 'warning:|error:' "$log" | sort -u
  echo "tidy: clang-tidy found the problems above (.clang-tidy lists the checks)" >&2
  rm -f "$log"
  exit 1
fi
rm -f "$log"
echo "tidy: $(printf '%s\n' $files | wc -l) files clean"
