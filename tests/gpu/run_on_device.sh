#!/usr/bin/env bash
# Issue 2 on a real GPU: the integration tests, examples and CLBlast binaries with rgpud
# serving the NVIDIA device, plus the overhead benchmark, from a build carried in.
#
#   tests/gpu/run_on_device.sh CARRY OUTDIR
#
# CARRY (made here by tests/gpu/make_integration_carry.sh) holds server/rgpud,
# client/librgpu-icd.so, tests/api_test, examples/matmul, bench/rgpu-bench-overhead, bin/
# (clinfo, clblast_test_*) and lib/ (shared libraries the GPU image lacks: spdlog, fmt, the
# ocl-icd loader, clblast, blas, prometheus-cpp, ...).
set -u
C=$(cd "$1" && pwd)
OUT=$2
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$C/lib:${LD_LIBRARY_PATH:-}"
# The system's vendor files, plus NVIDIA's ICD where the image has the library but no file.
. "$(dirname "$0")/../../bench/device_vendors.sh"
V=$(device_vendors "$OUT/env.txt")
echo "$C/client/librgpu-icd.so" >"$C/icd/rgpu.icd"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  echo "vendors:"; head -n1 "$V"/*.icd
} 2>&1 | tee -a "$OUT/env.txt"

summary="$OUT/summary.txt"
: >"$summary"
record() { echo "$1: $2" | tee -a "$summary"; }

start_rgpud() {  # $1: socket, rest: flags
  local sock=$1
  shift
  OCL_ICD_VENDORS=$V "$C/server/rgpud" --listen "unix:$sock" --platform NVIDIA "$@" >"$OUT/rgpud-$(basename "$sock").log" 2>&1 &
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
}

start_rgpud /tmp/rgpu-a.sock
export RGPU_SERVER=unix:/tmp/rgpu-a.sock
OCL_ICD_VENDORS=$C/icd "$C/bin/clinfo" -l >"$OUT/clinfo.txt" 2>&1
record clinfo "$(grep -c 'rgpu' "$OUT/clinfo.txt") rgpu lines; $(grep -m1 Device "$OUT/clinfo.txt")"

# The API test natively on NVIDIA, then through rgpud.
RGPU_TEST_PLATFORM=NVIDIA OCL_ICD_VENDORS=$V timeout 120 "$C/tests/api_test" >"$OUT/api-native.txt" 2>&1
record api_native "$(grep -E '^\[  (PASSED|FAILED)' "$OUT/api-native.txt" | tr '\n' ' ')"
RGPU_TEST_PLATFORM=rgpu OCL_ICD_VENDORS=$C/icd timeout 120 "$C/tests/api_test" >"$OUT/api-rgpu.txt" 2>&1
record api_rgpu "$(grep -E '^\[  (PASSED|FAILED)' "$OUT/api-rgpu.txt" | tr '\n' ' ')"
grep -E "FAILED|Failure" -A4 "$OUT"/api-*.txt | head -60 >"$OUT/api-failures.txt"

OCL_ICD_VENDORS=$C/icd "$C/examples/matmul" --platform rgpu --n 512 2>&1 | tee -a "$summary"
OCL_ICD_VENDORS=$V "$C/examples/matmul" --platform NVIDIA --n 512 2>&1 | tee -a "$summary"

for r in xgemm xgemv xaxpy xdot xnrm2 xtrsm xomatcopy xim2col; do
  OCL_ICD_VENDORS=$C/icd timeout 150 "$C/bin/clblast_test_$r" -q >"$OUT/clblast-$r.txt" 2>&1
  rc=$?
  record "clblast_$r" "exit $rc"
  sed 's/\x1b\[[0-9;]*m//g' "$OUT/clblast-$r.txt" | grep -E '^ +[0-9]+ test\(s\) (passed|failed|skipped)' | awk -v r=$r '{a[$3]+=$1} END {printf "  %s totals: %d passed, %d failed, %d skipped\n", r, a["passed"], a["failed"], a["skipped"]}' | tee -a "$summary"
done

# Slicing on the GPU: every sliceable launch in three pieces, same results expected.
start_rgpud /tmp/rgpu-b.sock --policy fair --force-slices 3
RGPU_SERVER=unix:/tmp/rgpu-b.sock RGPU_TEST_PLATFORM=rgpu OCL_ICD_VENDORS=$C/icd timeout 120 "$C/tests/api_test" >"$OUT/api-rgpu-sliced.txt" 2>&1
record api_rgpu_sliced "$(grep -E '^\[  (PASSED|FAILED)' "$OUT/api-rgpu-sliced.txt" | tr '\n' ' ')"
RGPU_SERVER=unix:/tmp/rgpu-b.sock OCL_ICD_VENDORS=$C/icd timeout 150 "$C/bin/clblast_test_xgemv" -q >"$OUT/clblast-xgemv-sliced.txt" 2>&1
sed 's/\x1b\[[0-9;]*m//g' "$OUT/clblast-xgemv-sliced.txt" | grep -E '^ +[0-9]+ test\(s\) (passed|failed)' | awk '{a[$3]+=$1} END {printf "clblast_xgemv_sliced: %d passed, %d failed\n", a["passed"], a["failed"]}' | tee -a "$summary"
kill %1 %2 2>/dev/null
sleep 1
grep -h "scheduling" "$OUT"/rgpud-*.log | tail -5 >>"$summary"
