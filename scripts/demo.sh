#!/usr/bin/env bash
# The quick start's main job: build rgpu, start rgpud on loopback with the embedded default
# device (PoCL's CPU device), and run a real OpenCL program (a 512 x 512 matrix multiply,
# checked against the CPU) through the rgpu ICD, next to the same program run locally.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
build=${RGPU_BUILD:-build}
log=$(mktemp /tmp/rgpud.XXXXXX.log)
"$build/server/rgpud" --listen 127.0.0.1:7420 >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q "listening on" "$log" && break; sleep 0.05; done
grep -q "listening on" "$log" || { cat "$log"; exit 1; }
sed -n 's/.*rgpud: //p' "$log"
echo
echo "Through rgpu (the program loads the rgpu ICD and talks to rgpud on 127.0.0.1:7420):"
OCL_ICD_VENDORS="$PWD/$build/icd" RGPU_SERVER=127.0.0.1:7420 "$build/examples/matmul" --platform rgpu --n 512
echo "Locally (the same program on the same device, without rgpu):"
OCL_ICD_VENDORS=/etc/OpenCL/vendors "$build/examples/matmul" --platform Portable --n 512
echo
sed -n 's/.*rgpud: //p' "$log" | grep session
