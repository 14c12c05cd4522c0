#!/usr/bin/env bash
# rgpud under abuse and with dead peers (docs/security.md): starts rgpud on TCP loopback
# with short limits and runs abuse_test's groups against it, each in its own process (the
# ICD keeps its server list per process): the gate (idle flood, bad-token flood), dead peers
# (a relay gone silent, a long kernel that must not count as silence), then a TLS rgpud for a
# handshake that stalls.
#
#   abuse_test.sh BUILD_DIR ABUSE_TEST_BINARY
set -eu
build=$1
bin=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/rgpu-abuse.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export ALICE_TOKEN=alice-$RANDOM$RANDOM DAVE_TOKEN=dave-$RANDOM$RANDOM
hash() { echo "$1" | "$build/server/rgpud" --hash-token; }
limits='[limits]
hello_timeout_seconds = 2
max_unauthenticated = 64
max_unauthenticated_per_address = 16
auth_delay_ms = 50
auth_block_after = 6
auth_block_seconds = 3
peer_timeout_seconds = 2'
tenants="[[tenant]]
id = \"alice\"
token_hash = \"$(hash "$ALICE_TOKEN")\"

[[tenant]]
id = \"dave\"
token_hash = \"$(hash "$DAVE_TOKEN")\""
printf '%s\n\n%s\n' "$limits" "$tenants" >"$dir/rgpud.toml"
metrics_port() { echo $(( 40000 + RANDOM % 20000 )); }

export RGPUD_TCP=1
export METRICS=127.0.0.1:$(metrics_port)
RGPUD_ARGS="--config $dir/rgpud.toml --metrics $METRICS" "$here/with_rgpud.sh" "$build" sh -c '
  rc=0
  "$0" --gtest_brief=1 --gtest_filter="Gate.*" || rc=1
  "$0" --gtest_brief=1 --gtest_filter="DeadPeer.SilentClient*" || rc=1
  "$0" --gtest_brief=1 --gtest_filter="DeadPeer.BusyServer*" || rc=1
  exit $rc' "$bin"

# TLS: a handshake that stalls half-way is dropped at the Hello deadline.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=abuse-ca" \
  -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=server" \
  -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$dir/server.ext"
openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
  -days 2 -extfile "$dir/server.ext" -out "$dir/server.crt" 2>/dev/null
printf '%s\n\n[tls]\ncert = "%s"\nkey = "%s"\n\n%s\n' "$limits" "$dir/server.crt" "$dir/server.key" \
  "$tenants" >"$dir/tls.toml"
export METRICS=127.0.0.1:$(metrics_port)
RGPUD_ARGS="--config $dir/tls.toml --metrics $METRICS" TLS_TEST=1 RGPU_CA=$dir/ca.crt \
  "$here/with_rgpud.sh" "$build" "$bin" --gtest_brief=1 --gtest_filter="Tls.*"
echo "abuse: ok"
