#!/usr/bin/env bash
# hashcat, unmodified, natively and through rgpud.
#
#   hashcat_test.sh bench MODE...   `hashcat -b -m MODE`: every mode that gives a speed
#                                   natively gives a nonzero one through rgpu
#   hashcat_test.sh crack           finds the word behind an MD5 hash by a mask attack, and
#                                   through rgpu finds the same word
#
# hashcat checks each kernel against known hashes before it runs (its self-test), so a
# speed is only printed for a kernel that computed right. --force: on an Intel CPU hashcat
# refuses any OpenCL runtime but Intel's (PoCL included) without it; it leaves the self-test on. Run under tests/with_rgpud.sh or
# tests/gpu/apps_on_device.sh.
set -u
. "$(dirname "$0")/lib.sh"
what=$1
shift

speed() {  # the first "Speed.#1" figure in FILE, in H/s; empty if none
  sed -nE 's/^Speed\.#[0-9]+\.*: *([0-9.]+) ([kMGT]?)H\/s.*/\1 \2/p' "$1" | head -n1 |
    awk '{ m = index("kMGT", $2); printf "%.0f\n", $1 * (m ? 1000 ^ m : 1) }'
}

# OpenCL only, on both sides: on an NVIDIA host hashcat otherwise also drives the GPU through
# CUDA, and its first device (whose speed this script reads) is then CUDA's, not rgpu's.
hashcat_cl=(hashcat --force --backend-ignore-cuda --backend-ignore-hip)

bench() {
  local mode=$1 n r
  native timeout 600 "${hashcat_cl[@]}" -b -m "$mode" >"$APPS_OUT/bench-$mode-native.txt" 2>&1
  run_through_rgpu_counted "$APPS_OUT/bench-$mode-rgpu.txt" timeout 600 "${hashcat_cl[@]}" -b -m "$mode"
  n=$(speed "$APPS_OUT/bench-$mode-native.txt")
  r=$(speed "$APPS_OUT/bench-$mode-rgpu.txt")
  echo "hashcat -b -m $mode: native ${n:-none} H/s, through rgpu ${r:-none} H/s ($RGPU_LAUNCHES launches)"
  if [ -z "$n" ]; then
    fail "-m $mode gave no speed natively"; tail -n 20 "$APPS_OUT/bench-$mode-native.txt"
  elif [ -z "$r" ] || [ "$r" = 0 ] || [ "${RGPU_LAUNCHES:-0}" = 0 ]; then
    fail "-m $mode natively $n H/s, through rgpu ${r:-no speed}"; tail -n 20 "$APPS_OUT/bench-$mode-rgpu.txt"
  fi
}

# The word is five lowercase letters; the mask tries all 12 million of them, so the search
# really runs kernels rather than hitting the answer in the first batch.
crack() {
  local word=gpuzz hash where
  hash=$(printf %s "$word" | md5sum | cut -d' ' -f1)
  echo "$hash" >"$APPS_OUT/hash.txt"
  for where in native rgpu; do
    local cmd=(timeout 600 "${hashcat_cl[@]}" -m 0 -a 3 -O --potfile-disable --quiet --outfile-format 2
               -o "$APPS_OUT/found-$where.txt" "$APPS_OUT/hash.txt" '?l?l?l?l?l')
    if [ $where = native ]; then
      native "${cmd[@]}" >"$APPS_OUT/crack-native.txt" 2>&1
    else
      run_through_rgpu_counted "$APPS_OUT/crack-rgpu.txt" "${cmd[@]}"
    fi
    local found
    found=$(cat "$APPS_OUT/found-$where.txt" 2>/dev/null)
    echo "crack $hash ($where): found '${found}'"
    [ "$found" = "$word" ] || { fail "$where: found '$found', not '$word'"; tail -n 20 "$APPS_OUT/crack-$where.txt"; }
  done
  [ "${RGPU_LAUNCHES:-0}" -gt 0 ] || fail "rgpud ran no kernel for the crack"
}

case $what in
  bench) for mode in "$@"; do bench "$mode"; done ;;
  crack) crack ;;
  *) echo "usage: $0 bench MODE... | crack"; exit 2 ;;
esac
finish
