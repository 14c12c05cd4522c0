#!/usr/bin/env bash
# A/B of rgpud options on the launch rate, on a GPU machine: runs the overhead benchmark's
# asynchronous task once per variant, alternating the variants for several rounds (so that a
# drift of the machine hits each alike), and prints every run's launches/s against the
# native run of the same benchmark invocation.
#
#   bench/ab_on_device.sh CARRIED_BUILD OUTDIR ROUNDS LAUNCHES LABEL=RGPUD_ARGS...
#   e.g. bench/ab_on_device.sh .carry-new $OUT/ab 3 100000 s16=--sample-every=16 s64=--sample-every=64
#
# RGPUD_ARGS are comma-separated rgpud options (each passed as --rgpud-arg), or
#   env:NAME=VALUE   an environment variable for the whole run (the client's, rgpud's, native's)
#   cpus:LIST        the whole run on these CPUs only (taskset; LIST uses + for commas), or
#   cpus:onepercore  on one hardware thread of each core (no two of its threads share a core)
# AB_ARGS: more overhead-benchmark arguments for every run (e.g. "--async-rounds 3").
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
    args=() envs=() prefix=()
    IFS=, read -ra each <<<"$opts"
    for o in "${each[@]}"; do
      case $o in
        env:*) envs+=("${o#env:}") ;;
        cpus:onepercore)
          prefix=(taskset -c "$(cat /sys/devices/system/cpu/cpu*/topology/thread_siblings_list |
            sed 's/[,-].*//' | sort -un | paste -sd,)") ;;
        cpus:*) prefix=(taskset -c "$(tr + , <<<"${o#cpus:}")") ;;
        '') ;;
        *) args+=("--rgpud-arg=$o") ;;
      esac
    done
    dir="$out/r$round-$label"
    # shellcheck disable=SC2086  # AB_ARGS is a list of words
    env "${envs[@]}" "${prefix[@]}" bash "$(dirname "$0")/on_device.sh" "$carry" "$dir" \
      --tasks async --no-links --iterations 100 --async-launches "$launches" \
      --worker-timeout 120 ${AB_ARGS:-} "${args[@]}" >/dev/null 2>&1
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
