#!/usr/bin/env bash
# A/B of rgpud options on the launch rate, on a GPU machine: runs the overhead benchmark's
# asynchronous task once per variant, alternating the variants for several rounds (so that a
# drift of the machine hits each alike), and prints every run's launches/s against the
# native run of the same benchmark invocation.
#
#   bench/ab_on_device.sh CARRIED_BUILD OUTDIR ROUNDS LAUNCHES LABEL=RGPUD_ARGS...
#   e.g. bench/ab_on_device.sh .carry-new $OUT/ab 3 100000 s16=--sample-every=16 s64=--sample-every=64
#
# RGPUD_ARGS are comma-separated rgpud options (each passed as --rgpud-arg).
set -uo pipefail
carry=$1 out=$2 rounds=$3 launches=$4
shift 4
mkdir -p "$out"
summary="$out/summary.md"
echo "| round | variant | rgpud options | native launches/s | unix | tcp | unix / native | tcp / native |" >"$summary"
echo "|---|---|---|---:|---:|---:|---:|---:|" >>"$summary"
for round in $(seq "$rounds"); do
  for v in "$@"; do
    label=${v%%=*} opts=${v#*=}
    args=()
    IFS=, read -ra each <<<"$opts"
    for o in "${each[@]}"; do args+=("--rgpud-arg=$o"); done
    dir="$out/r$round-$label"
    bash "$(dirname "$0")/on_device.sh" "$carry" "$dir" --tasks async --no-links --iterations 100 \
      --async-launches "$launches" --worker-timeout 120 "${args[@]}" >/dev/null 2>&1
    python3 - "$dir/overhead.json" "$round" "$label" "$opts" >>"$summary" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
runs = doc["runs"]
rate = lambda k: runs.get(k, {}).get("async", {}).get("launches_per_s", 0.0)
n, u, t = rate("native"), rate("rgpu_unix"), rate("rgpu_tcp")
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {n:.0f} | {u:.0f} | {t:.0f} | "
      f"{u / n if n else 0:.3f} | {t / n if n else 0:.3f} |")
EOF
  done
done
cat "$summary"
