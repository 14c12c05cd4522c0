#!/usr/bin/env bash
# Clients that vanish: rounds of 32 concurrent clients doing mixed work (program builds,
# uploads, kernels, reads, all checked) while a third of them are SIGKILLed at random
# points. After each round: every survivor's results were right, rgpud is alive, it holds
# no object of any dead session (Stats, via `rgpu status`), and its resident memory does
# not grow from round to round. Run by with_rgpud.sh.
#
#   stress_vanishing_clients.sh MATMUL RGPU [ROUNDS] [ROUND_SECONDS]
set -u
matmul=$1
rgpu=$2
rounds=${3:-3}
round_s=${4:-12}
clients=32
fail=0
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$RGPUD_PID/status"; }
objects() { "$rgpu" status | sed -nE 's/.*sessions, ([0-9]+) objects$/\1/p'; }
declare -a rss_after
for round in $(seq "$rounds"); do
  end=$((SECONDS + round_s))
  pids=() victims=()
  for c in $(seq $clients); do
    # Each client loops until the round ends: builds, uploads, kernels, reads, checks.
    (
      while [ $SECONDS -lt $end ]; do
        n=$(( (RANDOM % 5 + 1) * 64 ))
        "$matmul" --platform rgpu --n $n --repeat $((RANDOM % 4 + 1)) >/dev/null 2>"$RGPUD_LOG.c$c" || exit 1
      done
    ) 2>/dev/null &  # bash's "Killed" notices of the victims (each client's errors go to its file)
    pids+=($!)
  done
  # A third of them die at random moments, mid-whatever they were doing.
  for c in $(seq 0 3 $((clients - 1))); do victims+=("${pids[$c]}"); done
  for v in "${victims[@]}"; do
    sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
    pkill -KILL -P "$v" 2>/dev/null  # the matmul process inside the loop
    kill -KILL "$v"
  done 2>/dev/null
  survivors_failed=0
  for c in $(seq 0 $((clients - 1))); do
    [ $((c % 3)) -eq 0 ] && { wait "${pids[$c]}" 2>/dev/null; continue; }
    if ! wait "${pids[$c]}"; then
      survivors_failed=$((survivors_failed + 1))
      echo "round $round: client $((c + 1)) failed:"; cat "$RGPUD_LOG.c$((c + 1))"
    fi
  done 2>/dev/null
  kill -0 "$RGPUD_PID" || { echo "rgpud died in round $round"; exit 1; }
  # Dead sessions are noticed and released (their queues drain first).
  left=""
  for _ in $(seq 100); do
    left=$(objects)
    [ "$left" = 0 ] && break
    sleep 0.2
  done
  # Pooled transfer buffers go after 3 s unused, then the heap is trimmed (server/heap_trimmer.h).
  sleep 4.5
  rss_after[$round]=$(rss)
  sessions=$(grep -c " session [0-9]* end:" "$RGPUD_LOG")
  heap=$(grep " heap: " "$RGPUD_LOG" | tail -n1 | sed -E 's/.* heap: //')
  tables=$(grep " scheduler tables: " "$RGPUD_LOG" | tail -n1 | sed -E 's/.* scheduler tables: //')
  echo "round $round: $((clients - ${#victims[@]})) survivors, $survivors_failed failed, ${#victims[@]} killed, objects left $left, rgpud VmRSS ${rss_after[$round]} KiB, $sessions sessions so far"
  [ -n "$heap$tables" ] && echo "  heap: $heap; scheduler: $tables"
  [ -n "${STRESS_SMAPS_DIR:-}" ] && cp "/proc/$RGPUD_PID/smaps" "$STRESS_SMAPS_DIR/smaps.$round"
  [ "$survivors_failed" = 0 ] || fail=1
  [ "$left" = 0 ] || { echo "objects of dead sessions not released: $left"; "$rgpu" status; fail=1; }
done
# Memory: after round 3 (the first rounds warm PoCL's caches and kernel libraries) no round
# may end more than 5% above it (issue 11). With 3 rounds only: the third within 10% + 16 MiB
# of the second.
if [ "$rounds" -ge 4 ]; then
  limit=$(( ${rss_after[3]} * 105 / 100 ))
  for r in $(seq 4 "$rounds"); do
    [ "${rss_after[$r]}" -le "$limit" ] && continue
    echo "rgpud memory grows: round $r ends at ${rss_after[$r]} KiB, over 105% of round 3 (${rss_after[*]} KiB)"
    fail=1
    break
  done
elif [ "$rounds" -eq 3 ]; then
  limit=$(( ${rss_after[2]} * 11 / 10 + 16384 ))
  if [ "${rss_after[3]}" -gt "$limit" ]; then
    echo "rgpud memory grows between rounds: ${rss_after[*]} KiB"; fail=1
  fi
fi
"$rgpu" status
exit $fail
