#!/usr/bin/env bash
# Several client processes at once, and a client killed in the middle of its work: every
# surviving client gets correct results and the daemon keeps serving. Run by with_rgpud.sh.
set -u
matmul=$1
fail=0
pids=()
for i in 1 2 3 4; do
  "$matmul" --platform rgpu --n 256 --repeat 3 >"$RGPUD_LOG.client$i" 2>&1 &
  pids+=($!)
done
# A victim: a long run killed with SIGKILL while its kernels and transfers are in flight.
"$matmul" --platform rgpu --n 1024 --repeat 50 >/dev/null 2>&1 &
victim=$!
sleep 1.5
kill -KILL $victim
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    echo "client $((i + 1)) failed:"; cat "$RGPUD_LOG.client$((i + 1))"; fail=1
  fi
done
wait $victim 2>/dev/null
# The daemon noticed the victim and released what it owned.
for _ in $(seq 100); do
  grep -q "matmul pid $victim" "$RGPUD_LOG" && grep "session" "$RGPUD_LOG" | grep -q "end:.*objects released" && break
  sleep 0.1
done
start_line=$(grep "start:.*pid $victim)" "$RGPUD_LOG" | head -1)
[ -n "$start_line" ] || { echo "victim session never started"; fail=1; }
session=$(echo "$start_line" | sed -E 's/.*session ([0-9]+) start.*/\1/')
for _ in $(seq 200); do
  grep -q "session $session end:" "$RGPUD_LOG" && break
  sleep 0.1
done
if ! grep -q "session $session end:" "$RGPUD_LOG"; then
  echo "the killed client's session did not end"; fail=1
else
  grep "session $session end:" "$RGPUD_LOG"
fi
# And a new client is served correctly afterwards.
"$matmul" --platform rgpu --n 128 --repeat 1 || fail=1
kill -0 "$RGPUD_PID" || { echo "rgpud is gone"; fail=1; }
exit $fail
