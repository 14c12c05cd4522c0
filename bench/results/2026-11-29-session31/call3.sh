#!/usr/bin/env bash
# Session 31, call 3 (carry .carry-int = tests/gpu/make_integration_carry.sh of this session's build, with rgpu-probe-driver):
# results through rgpud's launch thread on NVIDIA's driver: api_test natively and through
# rgpud (the launch thread on by default with 16 CPUs; its 3,000-launch ordering test, the
# 2,000-launch burst with events (kept, released at once, waited for, in a wait list), changing
# arguments, a kernel released right after a burst), then CLBlast's test binaries for three
# routines through rgpud, and which sessions used the launch thread and the queues' unprofiled
# twins (rgpud's log); api_test's new burst with kept events on a queue without profiling
# runs there. Then rgpu-probe-driver --events three times (the twin with a held reference,
# and what releasing completed events costs).
set -u
C=$(cd .carry-int && pwd)
export LD_LIBRARY_PATH="$C/lib:${LD_LIBRARY_PATH:-}"
. bench/device_vendors.sh
V=$(device_vendors $OUT/env.txt)
echo "$C/client/librgpu-icd.so" >"$C/icd/rgpu.icd"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
rm -f /tmp/rgpu-a.sock
OCL_ICD_VENDORS=$V "$C/server/rgpud" --listen unix:/tmp/rgpu-a.sock --platform NVIDIA > $OUT/rgpud.log 2>&1 &
for _ in $(seq 100); do [ -S /tmp/rgpu-a.sock ] && break; sleep 0.1; done
export RGPU_SERVER=unix:/tmp/rgpu-a.sock
[ -n "${PART2:-}" ] || RGPU_TEST_PLATFORM=NVIDIA OCL_ICD_VENDORS=$V timeout 100 "$C/tests/api_test" > $OUT/api-native.txt 2>&1
echo "api native: $(grep -E '^\[  (PASSED|FAILED)' $OUT/api-native.txt | tr '\n' ' ')"
RGPU_TEST_PLATFORM=rgpu OCL_ICD_VENDORS=$C/icd timeout 100 "$C/tests/api_test" > $OUT/api-rgpu.txt 2>&1
echo "api rgpu: $(grep -E '^\[  (PASSED|FAILED)' $OUT/api-rgpu.txt | tr '\n' ' ')"
[ -n "${PART2:-}" ] || for r in xgemm xaxpy xdot; do
  OCL_ICD_VENDORS=$C/icd timeout 60 "$C/bin/clblast_test_$r" -q > $OUT/clblast-$r.txt 2>&1
  rc=$?
  sed 's/\x1b\[[0-9;]*m//g' $OUT/clblast-$r.txt | grep -E '^ +[0-9]+ test\(s\) (passed|failed|skipped)' |
    awk -v r=$r -v rc=$rc '{a[$3]+=$1} END {printf "clblast %s: exit %d, %d passed, %d failed, %d skipped\n", r, rc, a["passed"], a["failed"], a["skipped"]}'
done
[ -n "${PART2:-}" ] || for r in xgemv xnrm2 xtrsm; do
  OCL_ICD_VENDORS=$C/icd timeout 60 "$C/bin/clblast_test_$r" -q > $OUT/clblast-$r.txt 2>&1
  rc=$?
  sed 's/\x1b\[[0-9;]*m//g' $OUT/clblast-$r.txt | grep -E '^ +[0-9]+ test\(s\) (passed|failed|skipped)' |
    awk -v r=$r -v rc=$rc '{a[$3]+=$1} END {printf "clblast %s: exit %d, %d passed, %d failed, %d skipped\n", r, rc, a["passed"], a["failed"], a["skipped"]}'
done
kill %1; sleep 1
for i in 1 2 3; do
  OCL_ICD_VENDORS=$V timeout 60 "$C/bench/rgpu-probe-driver" --platform NVIDIA --events > $OUT/probe-events-$i.json 2>&1
  echo "probe $i rc=$?"
done
grep -E 'session [0-9]+ end' $OUT/rgpud.log | sed 's/.*rgpud: //' | cut -c1-400
grep -E 'FAILED|Failure' -A4 $OUT/api-*.txt | head -40 > $OUT/failures.txt
grep -E '^\[  (PASSED|FAILED)' $OUT/api-*.txt
(cd $OUT && tar czf logs.tar.gz env.txt gpu.txt rgpud.log probe-events-*.json && rm -f env.txt gpu.txt rgpud.log probe-events-*.json)
# (The first run printed the failures last and brought back eight files only: its rgpud log
# and probes were left out. PART2=1 reruns api_test through rgpud and the probes alone.)
