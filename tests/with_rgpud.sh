#!/usr/bin/env bash
# Runs a command against a real rgpud: starts the daemon on a private Unix socket (or TCP
# loopback with RGPUD_TCP=1), points the ICD loader at this build's rgpu.icd only, runs the
# command, stops the daemon and fails if the daemon did not exit cleanly.
#
#   with_rgpud.sh BUILD_DIR COMMAND [ARGS...]
set -u
build=$1
shift
dir=$(mktemp -d /tmp/rgpu-test.XXXXXX)
trap 'rm -rf "$dir"' EXIT
if [ "${RGPUD_TCP:-0}" = 1 ]; then
  port=$(( 20000 + RANDOM % 20000 ))
  addr="127.0.0.1:$port"
else
  addr="unix:$dir/rgpud.sock"
fi
"$build/server/rgpud" --listen "$addr" ${RGPUD_ARGS:-} >"$dir/rgpud.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  grep -q "listening on" "$dir/rgpud.log" 2>/dev/null && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.05
done
if ! grep -q "listening on" "$dir/rgpud.log"; then
  echo "rgpud did not start:"; cat "$dir/rgpud.log"; exit 1
fi
export OCL_ICD_VENDORS="$build/icd" RGPU_SERVER="$addr" RGPUD_LOG="$dir/rgpud.log" RGPUD_PID=$pid
"$@"
rc=$?
if ! kill -0 $pid 2>/dev/null; then
  echo "rgpud died during the test:"; cat "$dir/rgpud.log"; exit 1
fi
kill -TERM $pid
wait $pid
drc=$?
if [ $rc -ne 0 ] || [ $drc -ne 0 ] || [ -n "${RGPU_SHOW_LOG:-}" ]; then
  echo "--- rgpud log (exit $drc) ---"; tail -n 40 "$dir/rgpud.log"
fi
[ $drc -eq 0 ] || { echo "rgpud exited with $drc"; exit 1; }
exit $rc
