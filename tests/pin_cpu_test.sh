#!/usr/bin/env bash
# rgpud --pin-cpu: rgpud and every thread it makes (sessions, the completion watcher, the
# device's threads) run on the CPU given; off leaves them on every CPU the process may use;
# a CPU the process may not use is refused with a clear message.
#
#   pin_cpu_test.sh BUILD_DIR
set -eu
rgpud=$1/server/rgpud
dir=$(mktemp -d /tmp/rgpu-cpu.XXXXXX)
trap 'kill "$(cat "$dir/pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$dir"' EXIT
all=$(awk '/^Cpus_allowed_list/{print $2}' /proc/self/status)

cpus() {  # PID: each thread's name and CPU list, one per line
  for t in /proc/"$1"/task/*; do
    echo "$(cat "$t/comm") $(awk '/^Cpus_allowed_list/{print $2}' "$t/status")"
  done
}

check() {  # PIN_CPU EXPECTED_CPUS
  "$rgpud" --listen "unix:$dir/s.sock" --pin-cpu "$1" >"$dir/log" 2>&1 &
  echo $! >"$dir/pid"
  for _ in $(seq 100); do [ -S "$dir/s.sock" ] && break; sleep 0.1; done
  # A connection that says nothing holds its session thread until the hello timeout.
  python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(3)' "$dir/s.sock" &
  local client=$!
  for _ in $(seq 50); do cpus "$(cat "$dir/pid")" | grep -q '^rgpud-session ' && break; sleep 0.1; done
  cpus "$(cat "$dir/pid")" >"$dir/threads"
  for name in rgpud rgpud-session rgpud-watcher rgpud-dispatch; do
    grep -q "^$name " "$dir/threads" || { echo "no thread $name"; cat "$dir/threads"; exit 1; }
  done
  if awk -v want="$2" '$2 != want {bad = 1} END {exit !bad}' "$dir/threads"; then
    echo "--pin-cpu $1: a thread is not on $2:"; cat "$dir/threads"; cat "$dir/log"; exit 1
  fi
  echo "--pin-cpu $1: all $(wc -l <"$dir/threads") threads on $2"
  kill "$client" "$(cat "$dir/pid")"
  wait "$(cat "$dir/pid")" 2>/dev/null || true
  rm -f "$dir/s.sock"
}

first=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
check "$first" "$first"
check off "$all"
if "$rgpud" --listen "unix:$dir/x.sock" --pin-cpu 100000 >"$dir/bad" 2>&1; then
  echo "an impossible CPU was accepted"; exit 1
fi
grep -q "not off or a CPU this process may run on" "$dir/bad" || { cat "$dir/bad"; exit 1; }
echo "pin_cpu: ok"
