#!/usr/bin/env bash
# clpeak, unmodified, natively and through rgpud: every measurement that clpeak completes
# natively must complete through rgpu too, on the same device, with a number that is present
# and nonzero (the numbers themselves differ: they are timings).
#
#   clpeak_test.sh [CLPEAK OPTIONS...]     e.g. --compute-sp --kernel-latency
#
# clpeak has no size options; its sizes follow the device's limits, which PoCL takes from the
# environment (CI sets POCL_MAX_WORK_GROUP_SIZE and POCL_MEMORY_LIMIT for rgpud and the
# native run alike). Run under tests/with_rgpud.sh or tests/gpu/apps_on_device.sh.
set -u
. "$(dirname "$0")/lib.sh"

# "section / name value" for each measurement clpeak printed; the header lines (driver,
# compute units, clock) are not measurements.
measurements() {
  awk '
    /^ *(Driver version|Compute units|Clock frequency|Device|Platform)/ { next }
    /^    [A-Za-z].*\)$/ { section = $0; gsub(/^ +| +$/, "", section); next }
    /:/ {
      split($0, kv, ":"); name = kv[1]; value = kv[2]
      indent = match(name, /[^ ]/) - 1
      gsub(/^ +| +$/, "", name); gsub(/^ +/, "", value); split(value, v, " ")
      if (v[1] ~ /^[0-9.]+$/) print (indent > 4 ? section " / " : "") name "\t" v[1]
    }' "$1"
}

native timeout 600 clpeak "$@" >"$APPS_OUT/clpeak-native.txt" 2>&1 || fail "clpeak natively exited with $?"
run_through_rgpu_counted "$APPS_OUT/clpeak-rgpu.txt" timeout 600 clpeak "$@"
[ "$RGPU_RC" = 0 ] || fail "clpeak through rgpu exited with $RGPU_RC"
measurements "$APPS_OUT/clpeak-native.txt" >"$APPS_OUT/native.m"
measurements "$APPS_OUT/clpeak-rgpu.txt" >"$APPS_OUT/rgpu.m"
grep -q "Platform: rgpu" "$APPS_OUT/clpeak-rgpu.txt" || fail "clpeak did not run on the rgpu platform"
native_device=$(grep -m1 "Device:" "$APPS_OUT/clpeak-native.txt")
rgpu_device=$(grep -m1 "Device:" "$APPS_OUT/clpeak-rgpu.txt")
[ "$native_device" = "$rgpu_device" ] || fail "devices differ: '$native_device' vs '$rgpu_device'"
[ -s "$APPS_OUT/native.m" ] || fail "clpeak measured nothing natively"
while IFS=$'\t' read -r key native_value; do
  rgpu_value=$(awk -F '\t' -v k="$key" '$1 == k { print $2 }' "$APPS_OUT/rgpu.m")
  if [ -z "$rgpu_value" ]; then
    fail "$key: $native_value natively, missing through rgpu"
  elif ! awk -v v="$rgpu_value" 'BEGIN { exit !(v + 0 > 0) }'; then
    fail "$key: $native_value natively, $rgpu_value through rgpu"
  else
    printf '%-60s native %10s  rgpu %10s\n' "$key" "$native_value" "$rgpu_value"
  fi
done <"$APPS_OUT/native.m"
echo "through rgpu: ${RGPU_LAUNCHES:-no session} kernel launches"
[ -n "$RGPU_LAUNCHES" ] || fail "clpeak opened no session on rgpud"
# The transfer test alone runs no kernel; every other test does.
if [ "$*" != --transfer-bandwidth ] && [ "${RGPU_LAUNCHES:-0}" = 0 ]; then
  fail "rgpud ran no kernel for clpeak"
fi
[ $failures = 0 ] || { cat "$APPS_OUT/clpeak-native.txt" "$APPS_OUT/clpeak-rgpu.txt"; }
finish
