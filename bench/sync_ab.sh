#!/usr/bin/env bash
# Synchronous round trips of two or more rgpu builds, alternating, each run of the overhead
# benchmark's sync task measuring native beside rgpu in one invocation. On a small or shared
# machine one run moves by 2x with the machine's state, native too; the ratio of each run's
# rgpu p50 to the same run's native p50, and the median of those over many short runs, is
# what can be compared (issue 12, outcome 5: "median of repeated runs within 2x of native").
#
#   bench/sync_ab.sh OUTDIR ROUNDS LABEL=BUILD_DIR... [-- rgpu-bench-overhead options]
#   e.g. bench/sync_ab.sh /tmp/ab 10 base=../base/build new=build -- --platform Portable
set -euo pipefail
out=$1 rounds=$2
shift 2
variants=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do variants+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
bench=$(dirname "$0")/../build/bench/rgpu-bench-overhead
[ -x "$bench" ] || bench=$(command -v rgpu-bench-overhead)
mkdir -p "$out"
for r in $(seq "$rounds"); do
  for v in "${variants[@]}"; do
    label=${v%%=*} build=${v#*=}
    "$bench" --build "$build" --tasks sync --no-links --iterations "${ITERATIONS:-1000}" \
      --out "$out/$label-r$r" "$@" >"$out/$label-r$r.log" 2>&1 || echo "run $label-r$r failed"
  done
done
python3 - "$out" "${variants[@]}" >"$out/summary.md" <<'PY'
import json, statistics, sys
out, labels = sys.argv[1], [v.split("=", 1)[0] for v in sys.argv[2:]]
print("| variant | path | launch+finish p50 / native, every run | median | 4-byte read p50 / native, every run | median |")
print("|---|---|---|---:|---|---:|")
for label in labels:
    ratios = {}
    r = 1
    while True:
        try:
            doc = json.load(open(f"{out}/{label}-r{r}/overhead.json"))
        except FileNotFoundError:
            break
        runs = doc["runs"]
        nat = runs["native"]["sync"]
        for path in ("rgpu_unix", "rgpu_tcp"):
            s = runs.get(path, {}).get("sync")
            if not s:
                continue
            f = s["launch_finish_us"]["p50"] / nat["launch_finish_us"]["p50"]
            d = s["read4_us"]["p50"] / nat["read4_us"]["p50"]
            ratios.setdefault(path, ([], []))
            ratios[path][0].append(f)
            ratios[path][1].append(d)
        r += 1
    for path, (f, d) in ratios.items():
        print(f"| {label} | {path} | {' '.join(f'{x:.2f}' for x in f)} | {statistics.median(f):.2f} | "
              f"{' '.join(f'{x:.2f}' for x in d)} | {statistics.median(d):.2f} |")
PY
cat "$out/summary.md"
