#!/usr/bin/env bash
# Runs a command (under with_rgpud.sh) and then checks that rgpud really sliced launches:
# a slicing test whose launches all ran whole would prove nothing.
set -u
"$@"
rc=$?
[ $rc -eq 0 ] || exit $rc
for _ in $(seq 50); do grep -q "scheduling (" "$RGPUD_LOG" && break; sleep 0.1; done
grep "scheduling (" "$RGPUD_LOG"
if ! grep -E "scheduling \(.*[1-9][0-9]* slices" "$RGPUD_LOG" >/dev/null; then
  echo "no launch was sliced"; exit 1
fi
