#!/usr/bin/env bash
# Runs a command (under with_rgpud.sh) and then checks that rgpud really sliced launches
# (EXPECT=slices, the default), stopped preemptible runs part-way (EXPECT=preempted) or put a
# held launch on the device behind the one before it on its queue before that one had ended
# (EXPECT=chained), on the application's queue behind a gate (EXPECT=gated), and so with
# nothing unfinished before it on its queue (EXPECT=gated_first), or without a gate from the
# submitting thread (EXPECT=at_once) or from a session's launch thread (EXPECT=at_once_piped),
# or waiting in its session for its turn instead of behind a gate (EXPECT=parked), and that
# no tenant's held launch made a user event (EXPECT=no_user_events),
# or handed launches of a burst to a session's launch thread (EXPECT=launch_thread), launches
# with the application's events among them (EXPECT=launch_thread_events), some of them on a
# queue's unprofiled twin (EXPECT=launch_thread_twins), or had launches whose released events
# never reached it (EXPECT=few_launch_events, with EVENTS_AT_MOST); EXPECT may name several,
# space-separated, and A|B accepts either. A test whose launches all ran whole would prove
# nothing.
set -u
"$@"
rc=$?
[ $rc -eq 0 ] || exit $rc
for _ in $(seq 50); do grep -q "scheduling (" "$RGPUD_LOG" && break; sleep 0.1; done
grep "scheduling (" "$RGPUD_LOG"
for want in ${EXPECT:-slices}; do
  if [ "$want" = launch_thread ] || [ "$want" = launch_thread_events ] ||
    [ "$want" = launch_thread_twins ]; then
    # Written when a session ends, after the command's client has gone.
    for _ in $(seq 50); do grep -q "launches through its launch thread" "$RGPUD_LOG" && break; sleep 0.1; done
    grep -E "[1-9][0-9]* launches through its launch thread" "$RGPUD_LOG" ||
      { echo "no launch went through a launch thread"; exit 1; }
    if [ "$want" = launch_thread_events ]; then
      grep -E "\([1-9][0-9]* with the application's events," "$RGPUD_LOG" ||
        { echo "no launch with an event of the application went through a launch thread"; exit 1; }
    fi
    if [ "$want" = launch_thread_twins ]; then
      grep -E " [1-9][0-9]* on unprofiled twins\)" "$RGPUD_LOG" ||
        { echo "no launch went on a queue's unprofiled twin"; exit 1; }
    fi
    continue
  fi
  if [ "$want" = few_launch_events ]; then
    # Launches whose events the application released while they were still gathered in the
    # client reach rgpud without one: at most EVENTS_AT_MOST of a session's launches had one.
    for _ in $(seq 50); do grep -q "session [0-9]* end" "$RGPUD_LOG" && break; sleep 0.1; done
    most=$(grep -o "[0-9]* launches with an event" "$RGPUD_LOG" | sort -n | tail -1 | cut -d' ' -f1)
    echo "most launches with an event in one session: ${most:-0} (at most $EVENTS_AT_MOST)"
    [ "${most:-0}" -gt 0 ] && [ "${most:-0}" -le "$EVENTS_AT_MOST" ] ||
      { echo "launches with events released at once still reached rgpud with them"; exit 1; }
    continue
  fi
  if [ "$want" = no_user_events ]; then
    # Every tenant's line: a held launch that waited for its turn did so without a gate.
    made=$(grep -o "[0-9]* user events made" "$RGPUD_LOG" | cut -d' ' -f1 | sort -n | tail -1)
    echo "most user events one tenant's held launches made: ${made:-none}"
    [ "${made:-x}" = 0 ] || { echo "held launches made user events"; exit 1; }
    continue
  fi
  # A|B: either will do (where which one happens depends on timing).
  found=0
  for one in ${want//|/ }; do
    case $one in
      slices) pattern="[1-9][0-9]* slices" ;;
      preempted) pattern="\([1-9][0-9]* preempted\)" ;;
      chained) pattern="[1-9][0-9]* chained" ;;
      gated) pattern="[1-9][0-9]* gated" ;;
      gated_first) pattern="\([1-9][0-9]* first on their queue" ;;
      at_once) pattern="[1-9][0-9]* at once," ;;
      at_once_piped) pattern="[1-9][0-9]* of them through launch threads," ;;
      parked) pattern="[1-9][0-9]* parked," ;;
      *) echo "unknown EXPECT: $one"; exit 2 ;;
    esac
    grep -E "scheduling \(.*$pattern" "$RGPUD_LOG" >/dev/null && found=1
  done
  if [ $found = 0 ]; then
    echo "no launch was $want"; exit 1
  fi
done
