#!/usr/bin/env bash
# Runs one of Debian's CLBlast test binaries on the rgpu platform and fails unless every
# test case it ran passed. CLBlast exits 0 even when cases fail, so read its summary.
set -u
bin=/usr/bin/clblast_test_$1
out=$("$bin" -q 2>&1)
rc=$?
echo "$out" | grep -E "Running on|test\(s\) (passed|failed)" | sed 's/\x1b\[[0-9;]*m//g'
[ $rc -eq 0 ] || { echo "$1 exited with $rc"; echo "$out" | tail -20; exit 1; }
echo "$out" | grep -q "test(s) passed" || { echo "$1 ran no test"; exit 1; }
if echo "$out" | sed 's/\x1b\[[0-9;]*m//g' | grep -E "^ *[1-9][0-9]* test\(s\) failed"; then exit 1; fi
exit 0
