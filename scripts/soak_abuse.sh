#!/usr/bin/env bash
# An hour (or SECONDS) of abuse mixed with normal work against one rgpud that speaks TLS
# (docs/security.md, "Before authentication" and "Dead peers"); not part of CI.
#   - idle-connection floods: 1000 connections every 5 s from one address, each wave held 15 s
#   - a bad-token flood from another address, through TLS, as fast as the gate lets it
#   - 20 TLS handshakes stalled half-way from a third address, renewed every 12 s
#   - clients that go silent: one ICD client behind a relay that stops forwarding, every 20 s
#   - normal tenants: the matmul example through the ICD, two at a time, in a loop
# Every PROBE_EVERY seconds it records rgpud's memory, a legitimate TLS client's round trip
# (handshake, Hello, Stats) and the gate's counters in OUT/soak.csv, and prints a summary.
#
#   scripts/soak_abuse.sh [SECONDS] [OUT_DIR]   (default 3600, /tmp/rgpu-soak)
# Environment: PEER_TIMEOUT (s, default 10), HELLO_TIMEOUT (s, default 10), PROBE_EVERY (s, 10).
set -eu
cd "$(dirname "$0")/.."
seconds=${1:-3600}
out=${2:-/tmp/rgpu-soak}
build=${RGPU_BUILD:-build}
mkdir -p "$out"
[ -x "$build/tests/rgpu-abuse-soak" ] || cmake --build "$build" --target rgpu-abuse-soak rgpud rgpu-icd matmul
dir=$(mktemp -d /tmp/rgpu-soak.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=soak-ca" \
  -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=server" \
  -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$dir/server.ext"
openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
  -days 2 -extfile "$dir/server.ext" -out "$dir/server.crt" 2>/dev/null
export GOOD_TOKEN=good-$RANDOM$RANDOM
cat >"$dir/rgpud.toml" <<TOML
[limits]
hello_timeout_seconds = ${HELLO_TIMEOUT:-10}
peer_timeout_seconds = ${PEER_TIMEOUT:-10}

[tls]
cert = "$dir/server.crt"
key = "$dir/server.key"

[[tenant]]
id = "good"
token_hash = "$(echo "$GOOD_TOKEN" | "$build/server/rgpud" --hash-token)"
TOML
port=$(( 20000 + RANDOM % 20000 ))
export RGPU_SERVER=127.0.0.1:$port METRICS=127.0.0.1:$(( 40000 + RANDOM % 20000 ))
ulimit -n "$(ulimit -Hn)"
"$build/server/rgpud" --config "$dir/rgpud.toml" --listen "$RGPU_SERVER" --metrics "$METRICS" \
  >"$out/rgpud.log" 2>&1 &
export RGPUD_PID=$!
# Clients only: rgpud itself must find the real platform, not rgpu.
export RGPU_CA=$dir/ca.crt RGPU_TOKEN=$GOOD_TOKEN OCL_ICD_VENDORS=$PWD/$build/icd
pids+=("$RGPUD_PID")
for _ in $(seq 100); do grep -q "listening on" "$out/rgpud.log" && break; sleep 0.1; done
grep -q "listening on" "$out/rgpud.log" || { echo "rgpud did not start:"; cat "$out/rgpud.log"; exit 1; }
echo "rgpud $RGPUD_PID on $RGPU_SERVER (TLS), metrics $METRICS; ${seconds} s; results in $out"

soak=$build/tests/rgpu-abuse-soak
"$soak" probe "$seconds" "${PROBE_EVERY:-10}" >"$out/soak.csv" &
probe=$!
"$soak" attack "$seconds" >"$out/attack.log" 2>&1 &
pids+=($!)
end=$(( $(date +%s) + seconds ))
( while [ "$(date +%s)" -lt $end ]; do "$soak" silent >>"$out/silent.log" 2>&1 || true; sleep 20; done ) &
pids+=($!)
for i in 1 2; do
  ( ok=0; bad=0
    while [ "$(date +%s)" -lt $end ]; do
      if "$build/examples/matmul" --platform rgpu --n 128 >/dev/null 2>&1; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
    done
    echo "normal tenant $i: $ok matmul runs ok, $bad failed" >"$out/tenant$i.log" ) &
  pids+=($!)
done
wait $probe
sleep 2  # let the tenant loops write their counts
kill -0 "$RGPUD_PID" || { echo "rgpud died"; exit 1; }

echo "--- every probe (t_s, rgpud RSS KiB, legit TLS round trip ms, gate counters) ---"
cat "$out/soak.csv"
awk -F, 'NR > 1 {
    n++; if ($3 < 0) failed++; else { sum += $3; if ($3 > worst) worst = $3 }
    if (n == 1) rss0 = $2; rss = $2; if ($2 > rssmax) rssmax = $2 }
  END { printf "summary: %d probes, %d not served, legit round trip mean %.1f ms, worst %.1f ms; " \
               "rgpud RSS first %d KiB, last %d KiB, max %d KiB\n", n, failed, sum / (n - failed), worst, rss0, rss, rssmax }' \
  "$out/soak.csv" | tee "$out/summary.txt"
cat "$out"/tenant*.log | tee -a "$out/summary.txt"
echo "silent clients: $(grep -c "failed with" "$out/silent.log" || true) noticed; $(grep "failed with" "$out/silent.log" | awk '{ s += $(NF-1); n++ } END { if (n) printf "mean %.0f ms to fail", s / n }')" | tee -a "$out/summary.txt"
