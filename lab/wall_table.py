#!/usr/bin/env python3
"""Wall time per config from rgpu-lab results, side by side (a Markdown table on stdout).

    lab/wall_table.py LABEL=DIR/results.json [LABEL=DIR/results.json ...]

A cell is the median over rounds of each process's wall time (from GO to its last result;
copies of one process averaged within a round), in ms, processes in name order and joined by
" / ". Rounds whose persistent kernel ended at its --max-polls instead of the host's stop flag
are counted in brackets. Use it for rgpu's fair policy, whose generated tables (profiling
spans of each launch) leave out the time a held launch waited in rgpud.
"""
import json
import statistics
import sys


def cells(path):
    out = {}
    for config in json.load(open(path))["configs"]:
        walls, missed = {}, 0
        for rnd in config["rounds"]:
            by_name = {}
            for t in rnd:
                by_name.setdefault(t["name"], []).append(t["wall_ms"])
                notes = t.get("notes")
                if isinstance(notes, dict) and notes.get("stopped_by") == "max_polls":
                    missed += 1
            for name, v in by_name.items():
                walls.setdefault(name, []).append(statistics.mean(v))
        cell = " / ".join(f"{statistics.median(v):.0f}" for _, v in sorted(walls.items()))
        if missed:
            cell += f" ({missed} ran to max_polls)"
        out[config["label"]] = cell
    return out


def main(args):
    if not args or any("=" not in a for a in args):
        sys.exit(__doc__)
    columns = [a.split("=", 1) for a in args]
    data = [(label, cells(path)) for label, path in columns]
    labels = list(dict.fromkeys(k for _, c in data for k in c))
    print("| config | " + " | ".join(label for label, _ in data) + " |")
    print("|---|" + "---:|" * len(data))
    for k in labels:
        print(f"| {k} | " + " | ".join(c.get(k, "–") for _, c in data) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
