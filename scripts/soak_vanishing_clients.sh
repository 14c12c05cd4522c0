#!/usr/bin/env bash
# Issue 11, outcome 5: the vanishing-clients stress (tests/stress_vanishing_clients.sh) for
# ROUNDS rounds against one rgpud at --log-level debug, so that each round also shows
# rgpud's heap (allocated, mmapped, free in the arenas, after the trim that follows session
# ends) and the sizes of the scheduler's tables. Fails as the test does: a survivor wrong,
# objects of dead sessions left, or a round after the third more than 5% above it. CI runs
# the same test with 5 rounds (ctest -R stress_vanishing_clients); this is the long form.
#
#   scripts/soak_vanishing_clients.sh [ROUNDS] [ROUND_SECONDS] [OUT_DIR]   (20, 10, /tmp/rgpu-soak-vanishing)
#
# OUT_DIR gets the per-round lines (rounds.txt), rgpud's log and /proc/PID/smaps after each
# round (smaps.N: compare two with `scripts/soak_vanishing_clients.sh --smaps-diff A B`).
set -u
cd "$(dirname "$0")/.."
if [ "${1:-}" = --smaps-diff ]; then
  # Resident KiB by mapping (file, or [heap]/[stack]/anonymous), the biggest changes first.
  rss_by_mapping() {
    awk '/^[0-9a-f]+-[0-9a-f]+ / { name = ($6 == "" ? "[anonymous]" : $6) }
         /^Rss:/ { rss[name] += $2 } END { for (n in rss) print n, rss[n] }' "$1" | sort
  }
  join -a1 -a2 -e0 -o 0,1.2,2.2 <(rss_by_mapping "$2") <(rss_by_mapping "$3") |
    awk '{ d = $3 - $2; if (d != 0) printf "%+8d KiB  %8d -> %8d  %s\n", d, $2, $3, $1 }' | sort -rn -k1,1 | head -n 25
  exit 0
fi
rounds=${1:-20}
round_s=${2:-10}
out=${3:-/tmp/rgpu-soak-vanishing}
build=${RGPU_BUILD:-build}
mkdir -p "$out"
cmake --build "$build" --target rgpud rgpu-icd matmul rgpu >/dev/null
rm -f "$out"/smaps.*
echo "$rounds rounds of ${round_s} s; results in $out"
STRESS_SMAPS_DIR=$out RGPUD_ARGS="--log-level debug ${RGPUD_ARGS:-}" RGPU_SHOW_LOG=1 \
  tests/with_rgpud.sh "$build" tests/stress_vanishing_clients.sh "$build/examples/matmul" \
  "$build/cli/rgpu" "$rounds" "$round_s" 2>&1 | grep -vE "Killed|^    n=|^done \)" | tee "$out/output.txt"
rc=${PIPESTATUS[0]}
grep -E "^round|^  heap" "$out/output.txt" >"$out/rounds.txt"
echo "resident memory by mapping, round 3 -> round $rounds:"
"$0" --smaps-diff "$out/smaps.3" "$out/smaps.$rounds"
exit "$rc"
