#!/usr/bin/env bash
# Runs shared_test against the rgpud of tests/with_rgpud.sh, then checks in the daemon's log
# that bulk data went through a shared region exactly when it should have
# (RGPU_TEST_EXPECT_SHARED=1: the Unix socket with everything on; 0: every fallback). The
# sessions end, and are logged, only once the test process has exited.
#   shared_test.sh SHARED_TEST_BINARY
set -u
"$1" || exit 1
for _ in $(seq 50); do
  [ "$(grep -c 'session .* end:' "$RGPUD_LOG")" -ge 1 ] && break
  sleep 0.1
done
sleep 0.3
if grep -q "through the shared region" "$RGPUD_LOG"; then used=1; else used=0; fi
if [ "$used" != "$RGPU_TEST_EXPECT_SHARED" ]; then
  echo "FAILED: shared region used: $used, expected: $RGPU_TEST_EXPECT_SHARED"
  grep "session" "$RGPUD_LOG" | tail -20
  exit 1
fi
echo "shared region used: $used, as expected"
# Frames went through control rings exactly where the region was used: the ICD's sessions
# (the hostile tests' raw sessions, named "shared_test raw", attach rings of their own).
raw=$(sed -n 's/.*session \([0-9]*\) start: .*(shared_test raw).*/\1/p' "$RGPUD_LOG" | sort -u)
rings=0
for id in $(sed -n 's/.*session \([0-9]*\) end: .*frames through control rings.*/\1/p' "$RGPUD_LOG"); do
  echo "$raw" | grep -qx "$id" || rings=1
done
if [ "$rings" != "$RGPU_TEST_EXPECT_SHARED" ]; then
  echo "FAILED: control rings used: $rings, expected: $RGPU_TEST_EXPECT_SHARED"
  exit 1
fi
echo "control rings used: $rings, as expected"
# rgpud says when it keeps freed heap blocks for reuse (--heap-reuse; auto is off on PoCL).
if grep -q "kept for reuse" "$RGPUD_LOG"; then reuse=1; else reuse=0; fi
if [ "$reuse" != "${RGPU_TEST_EXPECT_HEAP_REUSE:-0}" ]; then
  echo "FAILED: heap reuse: $reuse, expected: ${RGPU_TEST_EXPECT_HEAP_REUSE:-0}"
  exit 1
fi
