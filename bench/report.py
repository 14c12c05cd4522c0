#!/usr/bin/env python3
"""Refreshes the generated regions of a doc from benchmark results.

    bench/report.py RESULT_DIR [--bench overhead|sharing] [--docs FILE] [--region PREFIX]
                    [--only SECTION,...]

RESULT_DIR holds BENCH.json and BENCH.md, as rgpu-bench-BENCH wrote them (the tables are
rendered by the benchmark itself, `rgpu-bench-BENCH --report BENCH.json`, so there is one
renderer). Each "## Section" of BENCH.md fills the region
<!-- BEGIN GENERATED: PREFIX-<slug> --> ... <!-- END GENERATED: PREFIX-<slug> -->; PREFIX is
the bench's name unless --region names another (two runs in one doc). --only fills just the
named sections (slugs such as "accounting"), leaving the doc's other regions of that prefix
as they are. The docs default to docs/performance.md (overhead) and docs/scheduling.md
(sharing). A run of the sharing benchmark's workload matrix (`--matrix`) fills the matrix-*
regions of docs/scheduling.md: `bench/report.py --bench sharing --region matrix RESULT_DIR`.
"""
import argparse
import pathlib
import re
import sys


def sections(markdown):
    """{slug: body} for each '## Title' section; the slug is the title's first word(s)."""
    out, title, lines = {}, "environment", []
    for line in markdown.splitlines():
        if line.startswith("## "):
            out[title] = "\n".join(lines).strip()
            title = re.sub(r"[^a-z0-9]+", "-", re.split(r"[(,]", line[3:])[0].lower()).strip("-")
            lines = [line.replace("## ", "### ", 1)]
        elif not line.startswith("# "):
            lines.append(line)
    out[title] = "\n".join(lines).strip()
    return out


def driver_costs(paths):
    """rgpu-probe-driver's JSON files as one table: microseconds per call, one column each."""
    import json
    runs = [json.loads(p.read_text()) for p in paths]
    labels = {
        "launch_no_event": "clEnqueueNDRangeKernel, no event",
        "launch_with_event": "clEnqueueNDRangeKernel with an event",
        "launch_with_event_and_setarg": "the same after clSetKernelArg",
        "launch_with_event_and_callback": "the same plus clSetEventCallback",
        "status_query_in_flight": "event status query, command in flight",
        "status_query_complete": "event status query, command complete",
        "profiling_start_end_complete": "profiling START and END of a complete command",
        "retain_release": "clRetainEvent + clReleaseEvent",
        "launch_then_finish": "one launch then clFinish",
    }
    head = "| call (µs per call, mean) | " + " | ".join(f"{r['device']} ({r['platform']})" for r in runs) + " |"
    rows = [head, "|---|" + "---:|" * len(runs)]
    for key, label in labels.items():
        rows.append(f"| {label} | " + " | ".join(f"{r['us'].get(key, float('nan')):.2f}" for r in runs) + " |")
    rows.append(f"\n{runs[0]['count']} calls each (`rgpu-probe-driver --platform NAME`).")
    return "### Driver calls per command\n\n" + "\n".join(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("result_dir", type=pathlib.Path)
    ap.add_argument("--bench", choices=["overhead", "sharing"], default="overhead")
    ap.add_argument("--docs", type=pathlib.Path)
    ap.add_argument("--region", help="region prefix (default: the bench's name)")
    ap.add_argument("--only", help="comma-separated section slugs to fill (default: all)")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    docs = args.docs or pathlib.Path({"overhead": "docs/performance.md", "sharing": "docs/scheduling.md"}[args.bench])
    prefix = args.region or args.bench
    parts = sections((args.result_dir / f"{args.bench}.md").read_text())
    probes = sorted(args.result_dir.glob("probe-*.json"))
    if probes:
        parts["driver-costs"] = driver_costs(probes)
    text = docs.read_text()
    missing = []

    def fill(m):
        slug = m.group(1)
        key = slug.removeprefix(prefix + "-")
        if only is not None and key not in only:
            return m.group(0)
        if key not in parts:
            missing.append(slug)
            return m.group(0)
        return f"<!-- BEGIN GENERATED: {slug} -->\n{parts[key]}\n<!-- END GENERATED: {slug} -->"

    text = re.sub(rf"<!-- BEGIN GENERATED: ({re.escape(prefix)}-[a-z0-9-]+) -->.*?<!-- END GENERATED: \1 -->",
                  fill, text, flags=re.S)
    docs.write_text(text)
    if missing:
        print("no section for: " + ", ".join(missing), file=sys.stderr)
        return 1
    print("sections available: " + ", ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
