#!/usr/bin/env python3
"""Refreshes the generated regions of docs/performance.md from benchmark results.

    bench/report.py RESULT_DIR [--docs docs/performance.md]

RESULT_DIR holds overhead.json and overhead.md, as rgpu-bench-overhead wrote them (the tables
are rendered by the benchmark itself, `rgpu-bench-overhead --report overhead.json`, so there is
one renderer). Each "## Section" of overhead.md fills the region
<!-- BEGIN GENERATED: overhead-<slug> --> ... <!-- END GENERATED: overhead-<slug> -->.
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("result_dir", type=pathlib.Path)
    ap.add_argument("--docs", type=pathlib.Path, default=pathlib.Path("docs/performance.md"))
    args = ap.parse_args()
    parts = sections((args.result_dir / "overhead.md").read_text())
    text = args.docs.read_text()
    missing = []

    def fill(m):
        slug = m.group(1)
        key = slug.removeprefix("overhead-")
        if key not in parts:
            missing.append(slug)
            return m.group(0)
        return f"<!-- BEGIN GENERATED: {slug} -->\n{parts[key]}\n<!-- END GENERATED: {slug} -->"

    text = re.sub(r"<!-- BEGIN GENERATED: (overhead-[a-z0-9-]+) -->.*?<!-- END GENERATED: \1 -->",
                  fill, text, flags=re.S)
    args.docs.write_text(text)
    if missing:
        print("no section for: " + ", ".join(missing), file=sys.stderr)
        return 1
    print("sections available: " + ", ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
