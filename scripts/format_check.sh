#!/usr/bin/env bash
# Checks that the C++ lines changed since BASE (default: main) follow .clang-format; prints
# the changes clang-format would make and fails if there are any. Only changed lines are
# looked at: the tree is not formatted wholesale, and untouched code keeps its layout.
#   scripts/format_check.sh [BASE]
# Needs clang-format-diff-14 (Debian's clang-format-14). scripts/test.sh (CI) runs it with
# BASE HEAD~1: the newest commit's lines.
set -eu
cd "$(dirname "$0")/.."
base=${1:-main}
if ! command -v clang-format-diff-14 >/dev/null; then
  echo "format_check: clang-format-diff-14 not installed (apt-get install clang-format-14)" >&2
  exit 2
fi
changes=$(git diff -U0 --no-color "$(git merge-base "$base" HEAD)" -- '*.cpp' '*.h' |
          clang-format-diff-14 -p1 -binary clang-format-14 || true)
if [ -n "$changes" ]; then
  printf '%s\n' "$changes"
  echo "format_check: the lines above differ from .clang-format" >&2
  exit 1
fi
echo "format_check: changed lines follow .clang-format"
