#!/usr/bin/env bash
# Images through rgpud on a GPU host: tests/image_test through rgpu alone, then against the
# device itself (ErrorsAreTheDevices left out: NVIDIA 580 dies of SIGFPE on its malformed
# images natively), and whether rgpud is still alive after. Usage: CARRY ($OUT/i gets the results)
set -u
C=$(cd "${1:-.carry-conf}" && pwd); O=$OUT/i; mkdir -p $O; export LD_LIBRARY_PATH=$C/lib
. bench/device_vendors.sh; V=$(device_vendors $O/env.txt); mkdir -p $C/icd; echo "$C/client/librgpu-icd.so" > $C/icd/rgpu.icd
NV=$(grep -l -i nvidia $V/*.icd | head -n1)
OCL_ICD_VENDORS=$V $C/server/rgpud --listen unix:/tmp/ri.sock --platform NVIDIA > $O/rgpud.log 2>&1 & pid=$!
for _ in $(seq 100); do [ -S /tmp/ri.sock ] && break; sleep 0.1; done
export RGPU_SERVER=unix:/tmp/ri.sock
RGPU_TEST_PLATFORM=rgpu OCL_ICD_VENDORS=$C/icd timeout 200 $C/tests/image_test > $O/rgpu-alone.txt 2>&1; echo "rgpu alone rc=$?"
RGPU_TEST_PLATFORM=rgpu RGPU_TEST_NATIVE_PLATFORM=NVIDIA RGPU_TEST_NATIVE_ICD=$NV OCL_ICD_VENDORS=$C/icd timeout 200 $C/tests/image_test --gtest_filter=-*ErrorsAreTheDevices* > $O/rgpu-vs-native.txt 2>&1; echo "rgpu vs native rc=$?"
RGPU_TEST_PLATFORM=NVIDIA OCL_ICD_VENDORS=$V timeout 200 $C/tests/image_test --gtest_filter=-*ErrorsAreTheDevices* > $O/native.txt 2>&1; echo "native rc=$?"
OCL_ICD_VENDORS=$C/icd $C/bin/clinfo > $O/clinfo-rgpu.txt 2>&1; OCL_ICD_VENDORS=$V $C/bin/clinfo > $O/clinfo-native.txt 2>&1
kill -0 $pid && echo "rgpud alive"; kill -TERM $pid; wait $pid; echo "rgpud rc=$?"
grep -hE "^\[  (PASSED|FAILED|SKIPPED)|Failure" $O/*.txt | sort | uniq -c | head -30
diff $O/clinfo-native.txt $O/clinfo-rgpu.txt | grep -i image | head
