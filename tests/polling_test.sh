#!/usr/bin/env bash
# rgpud's busy-polling after requests, as an operator sees it: rgpu_polling_sessions on the
# metrics endpoint. Idle clients (pyopencl programs that made one request and sleep, sending
# heartbeats) must be polled for at most --max-pollers at once, best-effort ones in at most
# half of the slots, and for no longer than the poll window after their last request:
# heartbeats do not extend it.
#
#   polling_test.sh BUILD_DIR
set -eu
build=$1
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/rgpu-poll.XXXXXX)
trap 'for f in "$dir"/*.pid; do kill "$(cat "$f")" 2>/dev/null || true; done; rm -rf "$dir"' EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
lc_token=lc-$RANDOM$RANDOM
be_token=be-$RANDOM$RANDOM
cat >"$dir/rgpud.toml" <<TOML
[[tenant]]
id = "lc"
priority = "latency-critical"
token_hash = "$(echo "$lc_token" | "$build/server/rgpud" --hash-token)"
[[tenant]]
id = "be"
token_hash = "$(echo "$be_token" | "$build/server/rgpud" --hash-token)"
TOML
# One request (a 4-byte write and a blocking read back), then idle for $1 seconds.
cat >"$dir/idle_client.py" <<'PY'
import sys, time
import numpy as np
import pyopencl as cl
p = [p for p in cl.get_platforms() if p.name == "rgpu"][0]
ctx = cl.Context([p.get_devices()[0]])
q = cl.CommandQueue(ctx)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4)
out = np.zeros(1, np.uint32)
cl.enqueue_copy(q, buf, np.array([7], np.uint32))
cl.enqueue_copy(q, out, buf)
assert out[0] == 7
print("ready", flush=True)
time.sleep(float(sys.argv[1]))
PY

window=6  # seconds; --peer-timeout 4 makes clients send a heartbeat every second
export PORT=$port DIR=$dir LC_TOKEN=$lc_token BE_TOKEN=$be_token WINDOW=$window
RGPUD_ARGS="--config $dir/rgpud.toml --metrics 127.0.0.1:$port --peer-timeout 4 \
  --poll-us ${window}000000 --lc-poll-us ${window}000000 --max-pollers 2" \
  "$here/with_rgpud.sh" "$build" bash -c '
    set -eu
    polling() {
      curl -sf --max-time 5 "http://127.0.0.1:$PORT/metrics" |
        awk "/^rgpu_polling_sessions /{print \$2}"
    }
    received() {  # TENANT: bytes rgpud received from it
      curl -sf --max-time 5 "http://127.0.0.1:$PORT/metrics" |
        awk -v t="rgpu_received_bytes_total{tenant=\"$1\"}" "\$1 == t {print \$2}"
    }
    start() {  # TOKEN NAME SLEEP
      RGPU_TOKEN=$1 /usr/bin/python3 "$DIR/idle_client.py" "$3" >"$DIR/$2.out" 2>&1 &
      echo $! >"$DIR/$2.pid"
    }
    wait_ready() {
      for i in $(seq 600); do
        n=0
        for c in "$@"; do grep -q ready "$DIR/$c.out" 2>/dev/null && n=$((n + 1)); done
        [ "$n" = "$#" ] && return 0
        sleep 0.05
      done
      echo "clients not ready:"; for c in "$@"; do cat "$DIR/$c.out"; done; exit 1
    }
    expect_polling() {  # WANT WHAT: over a second, never more than WANT and WANT at least once
      # (a session gives its slot back for each frame it reads, heartbeats too, and takes it
      # again after, so a look may fall between the two).
      seen=""
      for i in $(seq 10); do
        got=$(polling)
        [ "$got" -le "$1" ] || { echo "FAIL: $2: rgpu_polling_sessions $got, at most $1"; exit 1; }
        seen="$seen $got"
        sleep 0.1
      done
      echo "$seen" | grep -qw "$1" || { echo "FAIL: $2: rgpu_polling_sessions$seen, want $1"; exit 1; }
      echo "ok: $2: $1 (seen$seen)"
    }
    # Two best-effort clients: one slot of the two (half of --max-pollers).
    start "$BE_TOKEN" be1 30; start "$BE_TOKEN" be2 30
    wait_ready be1 be2
    expect_polling 1 "two idle best-effort sessions, at most half the slots"
    # Two latency-critical clients: the other slot, and no more.
    start "$LC_TOKEN" lc1 30; start "$LC_TOKEN" lc2 30
    wait_ready lc1 lc2
    t_last=$(date +%s.%N)
    before=$(received lc)
    expect_polling 2 "and two idle latency-critical ones, --max-pollers in all"
    # The window runs from the last request; heartbeats (one a second) do not restart it.
    deadline=$(python3 -c "print($t_last + $WINDOW + 4)")
    while :; do
      got=$(polling)
      [ "$got" = 0 ] && break
      if python3 -c "import sys, time; sys.exit(time.time() < $deadline)"; then
        echo "FAIL: $got sessions still polling $WINDOW s after the last request (heartbeats extend the window?)"
        exit 1
      fi
      sleep 0.2
    done
    for c in be1 be2 lc1 lc2; do
      kill -0 "$(cat "$DIR/$c.pid")" || { echo "FAIL: client $c ended early"; cat "$DIR/$c.out"; exit 1; }
    done
    # Heartbeats did arrive meanwhile: the idle tenants kept sending bytes.
    after=$(received lc)
    python3 -c "import sys; sys.exit(not $after > $before)" ||
      { echo "FAIL: no heartbeat from the idle clients ($before -> $after bytes)"; exit 1; }
    echo "ok: nothing polls $WINDOW s after the last request; the idle clients sent $((after - before)) bytes of heartbeats meanwhile"
    for c in be1 be2 lc1 lc2; do kill "$(cat "$DIR/$c.pid")" 2>/dev/null || true; done
  '
