#!/usr/bin/env bash
# Where rgpud dies on NVIDIA during image_test (diagnosis): rgpud under gdb if the host has it,
# at trace level, with ArraysAndImageBuffers then ErrorsAreTheDevices through rgpu alone.
set -u
C=$(cd "${1:-.carry-conf}" && pwd); O=$OUT/p; mkdir -p $O; export LD_LIBRARY_PATH=$C/lib
. bench/device_vendors.sh; V=$(device_vendors $O/env.txt); mkdir -p $C/icd; echo "$C/client/librgpu-icd.so" > $C/icd/rgpu.icd
if command -v gdb >/dev/null; then
  OCL_ICD_VENDORS=$V gdb -q -batch -ex run -ex bt --args $C/server/rgpud --listen unix:/tmp/rp.sock --platform NVIDIA --log-level trace > $O/rgpud.log 2>&1 &
else
  echo "no gdb" > $O/nogdb.txt
  OCL_ICD_VENDORS=$V $C/server/rgpud --listen unix:/tmp/rp.sock --platform NVIDIA --log-level trace > $O/rgpud.log 2>&1 &
fi
for _ in $(seq 200); do [ -S /tmp/rp.sock ] && break; sleep 0.1; done
for f in '*ArraysAndImageBuffers*' '*ErrorsAreTheDevices*' '*RoundTrip2D*'; do
  RGPU_DEBUG=1 RGPU_SERVER=unix:/tmp/rp.sock RGPU_TEST_PLATFORM=rgpu OCL_ICD_VENDORS=$C/icd timeout 60 $C/tests/image_test --gtest_filter="$f" > "$O/t-${f//\*/}.txt" 2>&1
  echo "$f rc=$?"
done
sleep 1; pkill -TERM rgpud; sleep 1
tail -n 40 $O/rgpud.log
