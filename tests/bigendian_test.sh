#!/usr/bin/env bash
# Builds the client side for s390x (big-endian) and runs it under qemu-user against the
# little-endian rgpud that with_rgpud.sh started. Skips (exit 0 with a notice) where the
# cross compiler or qemu is missing.
set -u
src=$1
out=$2
cxx=s390x-linux-gnu-g++
if ! command -v $cxx >/dev/null || ! command -v qemu-s390x >/dev/null; then
  echo "SKIP: $cxx or qemu-s390x not installed"; exit 0
fi
mkdir -p "$out/include"
ln -sfn /usr/include/CL "$out/include/CL"
if [ ! -x "$out/bigendian_client" ] || [ -n "$(find "$src/client" "$src/proto" "$src/tests/bigendian_client.cpp" "$src/tests/bigendian_discovery_stub.cpp" -newer "$out/bigendian_client" -name '*.[ch]*' | head -1)" ]; then
  $cxx -std=c++20 -O1 -w -static -pthread -DCL_TARGET_OPENCL_VERSION=300 -DCL_USE_DEPRECATED_OPENCL_1_2_APIS \
    -I"$src" -isystem "$out/include" \
    $(ls "$src"/client/*.cpp | grep -v '/discovery\.cpp$') "$src"/proto/wire.cpp "$src"/proto/info.cpp "$src"/proto/transport.cpp "$src"/proto/ring.cpp \
    $( [ -f "$src/proto/liveness.cpp" ] && echo "$src/proto/liveness.cpp" ) \
    $( [ -f "$src/proto/image.cpp" ] && echo "$src/proto/image.cpp" ) \
    $( [ -f "$src/proto/tls.h" ] && echo "$src/tests/bigendian_tls_stub.cpp" ) \
    $( [ -f "$src/client/discovery.h" ] && echo "$src/tests/bigendian_discovery_stub.cpp" ) \
    "$src/tests/bigendian_client.cpp" -o "$out/bigendian_client" || exit 1
fi
file "$out/bigendian_client" | grep -o "MSB[^,]*"
qemu-s390x "$out/bigendian_client"
