#!/usr/bin/env bash
# rgpud's own instructions per kernel launch, counted (not timed) by valgrind's callgrind on the
# embedded device (PoCL): the overhead benchmark's launch-rate task runs through two rgpud
# daemons started under callgrind, which counts what each session's reader thread executes
# (Session::Serve: reading frames, decoding, the scheduler, the backend), less what it spends
# inside OpenCL calls (the driver's share), divided by the launches. Deterministic up to a few
# percent, so a change to the launch path shows here before a GPU run.
#
#   bench/launch_instructions.sh [BUILD] [LAUNCHES]      (defaults: build, 20000)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
launches=${2:-20000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/build/server" "$work/out"
ln -s "$build/client" "$work/build/client"
cat >"$work/build/server/rgpud" <<WRAP
#!/bin/sh
exec valgrind --tool=callgrind --callgrind-out-file=$work/out/cg.%p --toggle-collect='rgpu::server::Session::Serve()' "$build/server/rgpud" "\$@"
WRAP
chmod +x "$work/build/server/rgpud"
"$build/bench/rgpu-bench-overhead" --build "$work/build" --tasks async --no-links --platform Portable \
  --async-launches "$launches" --async-rounds 1 --worker-timeout 600 --out "$work/bench" >"$work/bench.log" 2>&1 ||
  { tail -20 "$work/bench.log"; exit 1; }
# KEEP=DIR keeps the callgrind files there (for callgrind_annotate).
[ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$work"/out/cg.* "$KEEP"/
for f in "$work"/out/cg.*; do
  callgrind_annotate --inclusive=yes --threshold=100 "$f" 2>/dev/null | python3 -c '
import re, sys
launches = int(sys.argv[1]) + min(int(sys.argv[1]), 2000)  # the task warms up first
serve = driver = 0
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(\S.*)$", line)
    if not m:
        continue
    n, what = int(m.group(1).replace(",", "")), m.group(2)
    if "Session::Serve()" in what and not serve:
        serve = n
    elif re.match(r"\?\?\?:cl[A-Z]\w* \[.*libOpenCL", what):
        driver += n
print(f"{sys.argv[2]}: {(serve - driver) / launches:.0f} instructions per launch in rgpud, "
      f"{driver / launches:.0f} in OpenCL calls ({launches} launches, program build included)")
' "$launches" "$(basename "$f")"
done
