#!/usr/bin/env bash
# TLS between the ICD and rgpud, with certificates made here by the openssl CLI: a CA, a
# server certificate for 127.0.0.1 and localhost, a client certificate, and a second CA
# nobody trusts.
#   1. RGPU_CA set: the API tests run through TLS; tls:// with RGPU_CA works too.
#   2. The wrong CA, or no CA at all (the system store does not know ours): refused, with
#      a line that says the certificate could not be verified; the server stays up.
#   3. A server that requires client certificates: with RGPU_CERT/RGPU_KEY the matmul
#      example runs; without, it is refused with a line asking for a client certificate.
#
#   tls_test.sh BUILD_DIR API_TEST_BINARY MATMUL_BINARY
set -eu
build=$1
api_test=$2
matmul=$3
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/rgpu-tls.XXXXXX)
trap '[ -n "${RGPU_KEEP:-}" ] || rm -rf "$dir"' EXIT
cd "$dir"

ca() {  # NAME: a self-signed CA
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=$1" -keyout "$1.key" -out "$1.crt" 2>/dev/null
}
leaf() {  # NAME CA EXTENSIONS: a certificate signed by CA
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
    -keyout "$1.key" -out "$1.csr" 2>/dev/null
  printf '%s\n' "$3" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" -CAcreateserial -days 2 \
    -extfile "$1.ext" -out "$1.crt" 2>/dev/null
}
ca test-ca
ca other-ca
leaf server test-ca "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
leaf client test-ca "extendedKeyUsage=clientAuth"

token=tls-$RANDOM$RANDOM
hash=$(echo "$token" | "$build/server/rgpud" --hash-token)
tenant="[[tenant]]
id = \"tls-tenant\"
token_hash = \"$hash\""
cat >server.toml <<TOML
[tls]
cert = "$dir/server.crt"
key = "$dir/server.key"

$tenant
TOML
cat >mtls.toml <<TOML
[tls]
cert = "$dir/server.crt"
key = "$dir/server.key"
client_ca = "$dir/test-ca.crt"

$tenant
TOML
export RGPU_TOKEN=$token RGPUD_TCP=1 DIR=$dir MATMUL=$matmul

echo "== 1. API tests through TLS (RGPU_CA)"
RGPUD_ARGS="--config $dir/server.toml" RGPU_TEST_PLATFORM=rgpu RGPU_CA=$dir/test-ca.crt \
  "$here/with_rgpud.sh" "$build" sh -c '
    grep -q "TLS on" "$RGPUD_LOG" || { echo "rgpud did not turn TLS on"; exit 1; }
    "$0" --gtest_brief=1 || exit 1
    RGPU_SERVER="tls://$RGPU_SERVER" "$MATMUL" --platform rgpu --n 64 | tee "$DIR/out1"
    grep -q "rgpu" "$DIR/out1" || { echo "matmul did not use rgpu over tls://"; exit 1; }' "$api_test"

echo "== 2. Untrusted server certificate: refused"
RGPUD_ARGS="--config $dir/server.toml" \
  "$here/with_rgpud.sh" "$build" sh -c '
    out=$(RGPU_CA=$DIR/other-ca.crt clinfo -l 2>&1 || true)
    echo "$out" | grep -q "certificate verify failed" || { echo "no clear refusal: $out"; exit 1; }
    echo "wrong CA: $(echo "$out" | grep "rgpu:")"
    out=$(RGPU_SERVER="tls://$RGPU_SERVER" clinfo -l 2>&1 || true)
    echo "$out" | grep -q "certificate verify failed" || { echo "no clear refusal: $out"; exit 1; }
    echo "system store: $(echo "$out" | grep "rgpu:")"
    # A plaintext client gets nothing either: the server only speaks TLS.
    out=$(RGPU_DEBUG=1 clinfo -l 2>&1 || true)
    echo "$out" | grep -A1 rgpu | grep -q Device && { echo "plaintext client got devices: $out"; exit 1; }
    grep -q "refused" "$RGPUD_LOG" || { echo "server did not log the refusals"; exit 1; }
    echo "refusals logged: ok"'

echo "== 3. Client certificates required"
RGPUD_ARGS="--config $dir/mtls.toml" \
  "$here/with_rgpud.sh" "$build" sh -c '
    export RGPU_CA=$DIR/test-ca.crt
    RGPU_CERT=$DIR/client.crt RGPU_KEY=$DIR/client.key "$MATMUL" --platform rgpu --n 64 | tee "$DIR/out3"
    grep -q "rgpu" "$DIR/out3" || { echo "matmul with a client certificate did not use rgpu"; exit 1; }
    grep -q "CN=client" "$RGPUD_LOG" || { echo "session does not name the client certificate"; exit 1; }
    out=$(clinfo -l 2>&1 || true)
    echo "$out" | grep -q "client certificate" || { echo "no clear refusal: $out"; exit 1; }
    echo "no client certificate: $(echo "$out" | grep "rgpu:")"'
echo "tls: ok"
