#!/usr/bin/env bash
# With no usable server the rgpu platform reports no devices quickly, so programs fall back
# to other platforms: a closed port, and a server that accepts but never answers.
set -u
build=$1
export OCL_ICD_VENDORS="$build/icd"
fail=0
check() {  # $1: what, then the env assignment
  local what=$1
  shift
  local t0=$(date +%s%N)
  out=$(env "$@" clinfo -l 2>&1)
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  echo "$what: ${ms} ms: $(echo "$out" | tr '\n' ' ')"
  echo "$out" | grep -q "Device #" && { echo "  unexpected device"; fail=1; }
  [ $ms -lt 2500 ] || { echo "  too slow (limit 2.5 s, 2 s plus clinfo's own start)"; fail=1; }
}
port=$(( 30000 + RANDOM % 20000 ))
check "closed port" RGPU_SERVER=127.0.0.1:$port
# A listener that never accepts: the connection opens, Hello is never answered.
python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $port)); s.listen(8); time.sleep(20)" &
pid=$!
sleep 0.5
check "silent server" RGPU_SERVER=127.0.0.1:$port
kill $pid 2>/dev/null
exit $fail
