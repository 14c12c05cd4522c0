#!/usr/bin/env bash
# Runs a command (under with_rgpud.sh) and then checks that rgpud really sliced launches
# (EXPECT=slices, the default) or stopped preemptible runs part-way (EXPECT=preempted): a
# test whose launches all ran whole would prove nothing.
set -u
"$@"
rc=$?
[ $rc -eq 0 ] || exit $rc
for _ in $(seq 50); do grep -q "scheduling (" "$RGPUD_LOG" && break; sleep 0.1; done
grep "scheduling (" "$RGPUD_LOG"
case ${EXPECT:-slices} in
  slices) pattern="[1-9][0-9]* slices" ;;
  preempted) pattern="\([1-9][0-9]* preempted\)" ;;
esac
if ! grep -E "scheduling \(.*$pattern" "$RGPUD_LOG" >/dev/null; then
  echo "no launch was ${EXPECT:-sliced}"; exit 1
fi
