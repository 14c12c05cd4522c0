#!/usr/bin/env bash
# rgpud's threads under ThreadSanitizer (not part of CI: the build takes minutes and the runs
# are slow): rgpud, the ICD, api_test and scheduler_test built with -fsanitize=thread into
# build-tsan/, then the scheduler's launch-thread test, and api_test through rgpud's launch
# thread alone (its launches on unprofiled twins too), as two programs at once under fair, and
# with every launch held (a closed loop's at-once launches through the launch thread), and two
# programs with every launch held and none at once (launches parked in their sessions).
# Any report of rgpud's fails.
#   scripts/test_tsan.sh
set -u
cd "$(dirname "$0")/.."
build=${RGPU_TSAN_BUILD:-build-tsan}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRGPU_TSAN=ON \
  -DRGPU_BUILD_LAB=OFF >/dev/null || exit 1
cmake --build "$build" -j "$(nproc)" --target rgpud rgpu-icd api_test scheduler_test >/dev/null || exit 1
cd "$build"
logs=$(mktemp -d)
[ -n "${RGPU_TSAN_KEEP:-}" ] && echo "logs: $logs"
trap 'kill "${pid:-0}" 2>/dev/null; [ -n "${RGPU_TSAN_KEEP:-}" ] || rm -rf "$logs"' EXIT
failed=0
TSAN_OPTIONS="log_path=$logs/sched" ./tests/scheduler_test --gtest_filter='*Pipe*:*Twin*:*Park*' >"$logs/sched.out" 2>&1 ||
  { echo "scheduler_test failed"; failed=1; }
for mode in alone fair at_once parked; do
  args=(--launch-thread 1)
  [ $mode = fair ] && args+=(--policy fair)
  # Every launch held, none at once: a closed loop's wait in their sessions for the device
  # (SchedulerOptions::park_first), two programs taking turns.
  [ $mode = parked ] && args+=(--policy fair --force-slices 1 --gate-at-once 0 --park-first 1)
  # Every launch held; a closed loop's that go on the device at once go through the launch
  # thread (SchedulerOptions::pipe_loops).
  [ $mode = at_once ] && args+=(--policy fair --force-slices 1)
  TSAN_OPTIONS="report_signal_unsafe=0 log_path=$logs/rgpud-$mode" \
    ./server/rgpud --listen "unix:$logs/$mode.sock" "${args[@]}" >"$logs/rgpud-$mode.out" 2>&1 &
  pid=$!
  for _ in $(seq 100); do [ -S "$logs/$mode.sock" ] && break; sleep 0.1; done
  # The clients' environment only: rgpud itself must see the real platforms.
  client=(env OCL_ICD_VENDORS="$PWD/icd" RGPU_SERVER="unix:$logs/$mode.sock" RGPU_TEST_PLATFORM=rgpu)
  other=0
  if [ $mode = fair ] || [ $mode = parked ]; then
    "${client[@]}" ./tests/api_test --gtest_filter=Api.BurstsOfLaunchesRunInOrder:Api.ArgumentsChangedBetweenLaunchesAreSeen \
      >"$logs/api-$mode-2.out" 2>&1 &
    other=$!
  fi
  filter=()
  [ $mode = at_once ] &&
    filter=(--gtest_filter=Api.ClosedLoopsOfLaunchesRunInOrder:Api.BurstsOfLaunchesWithEventsRunInOrder)
  "${client[@]}" ./tests/api_test "${filter[@]}" >"$logs/api-$mode.out" 2>&1 ||
    { echo "api_test ($mode) failed"; failed=1; }
  [ $other = 0 ] || wait $other || { echo "the second api_test ($mode) failed"; failed=1; }
  kill -TERM $pid
  wait $pid
  [ $mode = parked ] || grep -q "launches through its launch thread" "$logs/rgpud-$mode.out" ||
    { echo "no launch went through the launch thread ($mode)"; failed=1; }
  # api_test's burst with kept events on a queue without profiling: on the queue's twin.
  [ $mode != alone ] || grep -qE " [1-9][0-9]* on unprofiled twins" "$logs/rgpud-$mode.out" ||
    { echo "no launch went on an unprofiled twin ($mode)"; failed=1; }
  [ $mode != at_once ] ||
    grep -qE "[1-9][0-9]* of them through launch threads" "$logs/rgpud-$mode.out" ||
    { echo "no held launch went at once through a launch thread ($mode)"; failed=1; }
  [ $mode != parked ] || grep -qE "[1-9][0-9]* parked," "$logs/rgpud-$mode.out" ||
    { echo "no launch was parked ($mode)"; failed=1; }
done
for f in "$logs"/sched.[0-9]* "$logs"/rgpud-alone.[0-9]* "$logs"/rgpud-fair.[0-9]* \
  "$logs"/rgpud-at_once.[0-9]* "$logs"/rgpud-parked.[0-9]*; do
  [ -e "$f" ] || continue
  echo "--- $f"; head -60 "$f"; failed=1
done
[ $failed = 0 ] && echo "tsan: no reports"
exit $failed
