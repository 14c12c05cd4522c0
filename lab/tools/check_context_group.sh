#!/usr/bin/env bash
# ctest lab_rgpu_group_seed000-tables1-2: `rgpu-lab run --context-group` end to end through
# the real rgpud (on whatever device it finds: PoCL's CPU device in CI). It passes only if
# the option reached rgpud: the config the runner wrote puts the tenants in group "lab",
# rgpud made the group's shared context, every session (the --describe probe's too)
# authenticated as one of the workers' tenants, and the result file names the group.
#
#   check_context_group.sh RGPU_LAB SCENARIO RGPU_BUILD_DIR OUT_DIR
set -uo pipefail
lab=$1 scenario=$2 build=$3 out=$4
# rgpud's log is appended to: lines of an earlier run must not pass for this one's.
rm -rf "$out"
"$lab" run "$scenario" --mode rgpu --policy fair --context-group --rgpu-build "$build" \
    --profile tiny --only x2 --skip-if-no-platform --out "$out"
rc=$?
[ $rc -eq 77 ] && exit 77
dir=$out/rgpu-fair-group
fail() {
  echo "FAIL: $*"
  tail -30 "$dir/logs/rgpud.log" 2>/dev/null
  exit 1
}
[ $rc -eq 0 ] || fail "rgpu-lab exited with $rc"
[ -f "$dir/results.json" ] || fail "no $dir/results.json (results must go to rgpu-POLICY-group/)"
grep -q '^context_group = "lab"$' "$dir/logs/rgpud.toml" || fail "no context group in $dir/logs/rgpud.toml"
grep -q "context group 'lab': one device context" "$dir/logs/rgpud.log" ||
  fail "rgpud never made context group 'lab''s shared context"
for tenant in w0 w1 w2; do
  grep -Eq "session [0-9]+ start: .* tenant $tenant\$" "$dir/logs/rgpud.log" ||
    fail "no session of tenant $tenant in rgpud's log"
done
if grep -Eq "session [0-9]+ start: .* tenant anonymous\$" "$dir/logs/rgpud.log"; then
  fail "a session was the anonymous tenant (no token)"
fi
grep -q '"context_group": "lab"' "$dir/results.json" || fail "results.json does not name the group"
echo "context group: $(grep -c ' start: ' "$dir/logs/rgpud.log") sessions of tenants" \
  "$(grep -Eo 'tenant w[0-9]+$' "$dir/logs/rgpud.log" | sort -u | cut -d' ' -f2 | tr '\n' ' ')in group 'lab'"
