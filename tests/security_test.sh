#!/usr/bin/env bash
# Starts rgpud with three tenants (tokens made here, stored hashed) and runs the security
# tests against it: security_test (raw protocol attacker, quotas, limits) and the ICD's
# behaviour with a wrong token.
#
#   security_test.sh BUILD_DIR SECURITY_TEST_BINARY
set -eu
build=$1
bin=$2
dir=$(mktemp -d /tmp/rgpu-sec.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export ALICE_TOKEN=alice-$RANDOM$RANDOM BOB_TOKEN=bob-$RANDOM$RANDOM CAROL_TOKEN=carol-$RANDOM$RANDOM
export DAVE_TOKEN=dave-$RANDOM$RANDOM ERIN_TOKEN=erin-$RANDOM$RANDOM
hash() { echo "$1" | "$build/server/rgpud" --hash-token; }
cat >"$dir/rgpud.toml" <<TOML
[limits]
max_objects_per_session = 2000
max_outbox = "16MiB"

[[tenant]]
id = "alice"
token_hash = "$(hash "$ALICE_TOKEN")"
priority = "latency-critical"
weight = 2.0

[[tenant]]
id = "bob"
token_hash = "$(hash "$BOB_TOKEN")"
mem_quota = "1MiB"

[[tenant]]
id = "carol"
token_hash = "$(hash "$CAROL_TOKEN")"
max_sessions = 2

# dave and erin trust each other: their sessions share device contexts.
[[tenant]]
id = "dave"
token_hash = "$(hash "$DAVE_TOKEN")"
context_group = "trusted"

[[tenant]]
id = "erin"
token_hash = "$(hash "$ERIN_TOKEN")"
context_group = "trusted"
TOML
export RGPUD_ARGS="--config $dir/rgpud.toml"
here=$(dirname "$0")
# ContextGroup.*: three sessions of the group made contexts; the device got one.
"$here/with_rgpud.sh" "$build" sh -c '"$0" && n=$(grep -c "context group .trusted.: one device context" "$RGPUD_LOG") &&
  { [ "$n" = 1 ] || { echo "context group: $n device contexts made, expected 1"; exit 1; }; }' "$bin"
# Through the ICD: a wrong token means no rgpu devices and a line saying why.
"$here/with_rgpud.sh" "$build" sh -c '
  out=$(RGPU_TOKEN=wrong clinfo -l 2>&1)
  echo "$out" | grep -q "unknown token" || { echo "no refusal message: $out"; exit 1; }
  echo "$out" | grep -q "rgpu" && echo "$out" | grep -A1 rgpu | grep -q Device && { echo "devices shown: $out"; exit 1; }
  grep -q "refused: unknown token" "$RGPUD_LOG" || { echo "server did not log the refusal"; exit 1; }
  echo "wrong token refused: ok"'
