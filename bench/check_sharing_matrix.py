#!/usr/bin/env python3
"""CI smoke of the sharing benchmark's workload matrix (ctest bench_sharing_matrix_quick).

    bench/check_sharing_matrix.py --bench build/bench/rgpu-bench-sharing --out DIR

Runs `rgpu-bench-sharing --matrix --quick --platform Portable` (native processes and a real
rgpud with fifo and fair, on PoCL), then checks that sharing.json holds every expected cell of
every mode with sane figures, that an LC shape has the same due times solo and in a cell, that
rgpud accounted every tenant some device time, that two equal BE tenants get their own table
(their total against fifo's), and that bench/report.py fills a doc's matrix
regions from the result. It does not check the targets: PoCL runs on the CPU.
"""
import argparse
import json
import math
import pathlib
import shutil
import subprocess
import sys
import tempfile

MODES = ["native", "fifo", "fair"]
US = 1000  # --quick's LC kernel length
REPEATS = 2  # --solo-repeats: native runs of each solo shape
LC_SOLOS = [f"mx_lc_{a}_{US}" for a in ("periodic", "poisson", "bursty", "pareto")]
BE_SOLOS = [f"mx_be_{k}" for k in ("short", "membound", "long", "opaque", "brief", "tiny")]
CELLS = {
    f"mx_periodic_{US}_short": ["lc", "be"],
    f"mx_poisson_{US}_membound": ["lc", "be"],
    f"mx_bursty_{US}_long": ["lc", "be"],
    f"mx_pareto_{US}_opaque": ["lc", "be"],
    f"mx_periodic_{US}_brief": ["lc", "be"],
    f"mx_poisson_{US}_tiny": ["lc", "be"],
    f"mx_2lc2be_poisson_{US}": ["lc", "lc2", "be", "be2"],
}
EQUAL = {"mx_equal2_tiny": ["t0", "t1"]}  # two equal BE tenants, no LC
EXPECTED = {**{s: ["lc"] for s in LC_SOLOS}, **{s: ["be"] for s in BE_SOLOS}, **CELLS, **EQUAL}

problems = []


def expect(ok, what):
    if not ok:
        problems.append(what)
    return ok


def check_lc(where, t, duration_s):
    lat = t.get("latency_us", {})
    n = lat.get("n", 0)
    if not expect(n >= 10 and n == t.get("kernels"), f"{where}: {n} LC requests"):
        return
    qs = [lat[q] for q in ("min", "p50", "p99", "p999", "max")]
    expect(all(isinstance(q, (int, float)) and math.isfinite(q) for q in qs), f"{where}: latency figures {qs}")
    expect(0 < qs[0] <= qs[1] <= qs[2] <= qs[3] <= qs[4], f"{where}: latency not ordered {qs}")
    expect(qs[4] < (duration_s + 60) * 1e6, f"{where}: max latency {qs[4]} us")
    expect(0 <= t.get("late", -1) <= n, f"{where}: late {t.get('late')}")


def check_be(where, t, duration_s):
    expect(t.get("kernels", 0) >= 1, f"{where}: {t.get('kernels')} BE kernels")
    expect(t.get("kernels_per_s", 0) > 0, f"{where}: kernels/s {t.get('kernels_per_s')}")
    expect(t.get("elapsed_s", 0) >= duration_s, f"{where}: elapsed {t.get('elapsed_s')} s")


def check_runs(doc):
    duration_s = doc["options"]["duration_s"]
    runs = {(r["mode"], r["scenario"]): r for r in doc["runs"]}
    for mode in MODES:
        for scenario, names in EXPECTED.items():
            where = f"{mode} {scenario}"
            r = runs.get((mode, scenario))
            if not expect(r is not None, f"{where}: no run") or not expect("error" not in r, f"{where}: {r.get('error')}"):
                continue
            host = r.get("host", {})
            # The host's 1 ms sleeper woke about once a millisecond over the run.
            expect(host.get("wakeups", 0) >= duration_s * 1000 / 20 and 0 <= host.get("late_p50_ms", -1)
                   <= host.get("late_max_ms", -1) and host.get("late_over_1ms", -1) >= 0,
                   f"{where}: host stalls {host}")
            tenants = {t["tenant"]: t for t in r["tenants"]}
            expect(sorted(tenants) == sorted(names), f"{where}: tenants {sorted(tenants)}")
            for name, t in tenants.items():
                tw = f"{where} {name}"
                if not expect("error" not in t, f"{tw}: {t.get('error')}"):
                    continue
                (check_lc if name.startswith("lc") else check_be)(tw, t, duration_s)
                if mode != "native":  # through rgpud: it must have charged the tenant's kernels
                    acc = t.get("accounting", {})
                    expect(acc.get("accounted_s", 0) > 0, f"{tw}: rgpud accounted {acc}")
    return runs


def check_same_arrivals(doc, runs):
    """Same seed, same process: the same due times solo and beside a BE tenant."""
    for mode in MODES:
        for cell in CELLS:
            if cell.startswith("mx_2lc2be"):
                continue
            arrival = cell.split("_")[1]
            solo = runs.get(("native", f"mx_lc_{arrival}_{US}"))
            got = runs.get((mode, cell))
            if solo and got and "error" not in solo and "error" not in got:
                n_solo = solo["tenants"][0]["latency_us"]["n"]
                n_cell = next(t for t in got["tenants"] if t["tenant"] == "lc")["latency_us"]["n"]
                expect(n_solo == n_cell, f"{mode} {cell}: {n_cell} requests, {n_solo} solo (same seed)")
    periodic = runs.get(("native", f"mx_lc_periodic_{US}"))
    if periodic and "error" not in periodic:
        opt = doc["options"]
        due = math.ceil(opt["duration_s"] * 1e3 / opt["matrix"]["lc_gap_ms"] - 1e-9)
        expect(periodic["tenants"][0]["latency_us"]["n"] == due, f"periodic: {due} requests expected")


def check_repeats(doc, md):
    """Each solo shape ran natively REPEATS times, the later ones after a mode through rgpud,
    and the matrix divides by their median (checked on one cell, against sharing.md)."""
    order = [(r["mode"], r["scenario"], r.get("solo_repeat", 0)) for r in doc["runs"]]
    for scenario in LC_SOLOS + BE_SOLOS:
        native = [i for i, (m, s, _) in enumerate(order) if m == "native" and s == scenario]
        expect(len(native) == REPEATS, f"{scenario}: {len(native)} native runs, {REPEATS} expected")
        if len(native) == REPEATS:
            expect(order[native[-1]][2] == REPEATS - 1, f"{scenario}: last native run {order[native[-1]]}")
            expect(any(m != "native" for m, _, _ in order[native[0]:native[-1]]),
                   f"{scenario}: no mode through rgpud between its native runs")
    cell = f"mx_poisson_{US}_membound"
    p99s = sorted(t["latency_us"]["p99"] for r in doc["runs"]
                  if r["mode"] == "native" and r["scenario"] == f"mx_lc_poisson_{US}" and "error" not in r
                  for t in r["tenants"] if t["tenant"] == "lc")
    got = [r for r in doc["runs"] if r["mode"] == "fifo" and r["scenario"] == cell and "error" not in r]
    if len(p99s) == REPEATS and got:
        median = (p99s[(REPEATS - 1) // 2] + p99s[REPEATS // 2]) / 2
        want = next(t for t in got[0]["tenants"] if t["tenant"] == "lc")["latency_us"]["p99"] / median
        row = next((line for line in md.splitlines() if line.startswith(f"| `{cell}` |")), "")
        cells = [c.strip() for c in row.split("|")]
        # | `cell` | tenants | native LC | native BE | fifo LC | ...
        shown = float(cells[5].split("x")[0]) if len(cells) > 5 and "x" in cells[5] else float("nan")
        expect(abs(shown - want) <= 0.006, f"{cell}: fifo LC shown {cells[5:6]}, median-based ratio {want:.3f}")
    expect("| `mx_lc_poisson_1000` |" in md.split("## Matrix native solo runs, repeated")[-1],
           "sharing.md: no table of the repeated native solo runs")


def check_header(doc):
    env = doc.get("environment", {})
    for key in ("date", "commit", "device"):
        expect(key in env, f"environment has no {key}")
    expect("driver" in env.get("device", {}), "environment: no driver")
    expect("seed" in doc["options"].get("matrix", {}), "options: no seed")
    cal = doc.get("calibration_matrix", {})
    expect(cal.get("opaque", {}).get("binary_bytes", 0) > 0, f"opaque kernel: {cal.get('opaque')}")
    expect(cal.get("membound", {}).get("device_ms", 0) > 0, f"membound kernel: {cal.get('membound')}")
    # The accounting's references: an LC kernel as its tenant runs it, after an idle gap; a
    # short BE kernel back to back. Every tenant through rgpud is compared against them.
    spins = cal.get("spins", {})
    lc = spins.get(f"lc{US}", {})
    expect(lc.get("spaced_device_ms", 0) > 0, f"lc{US}: no time after an idle gap: {lc}")
    for kind in ("brief", "tiny"):
        expect(spins.get(kind, {}).get("back_to_back_device_ms", 0) > 0, f"{kind}: no back-to-back time")
    for run in doc["runs"]:
        for t in run.get("tenants", []):
            if t.get("role") == "lc" and "kernel_device_ms" in t:
                expect(t["kernel_device_ms"] == lc.get("spaced_device_ms"),
                       f"{run['mode']} {run['scenario']} {t.get('tenant')}: accounted against "
                       f"{t['kernel_device_ms']} ms, not the LC kernel after a gap ({lc.get('spaced_device_ms')})")


def check_report(out):
    md = (out / "sharing.md").read_text()
    for scenario in EXPECTED:
        if scenario not in EQUAL:
            expect(f"| `{scenario}` |" in md, f"sharing.md: no row for {scenario}")
    # Equal tenants: their own table, a row per kind and count, each mode's total against fifo.
    equal = md.split("## Matrix equal tenants")[-1]
    row = next((x for x in equal.splitlines() if x.startswith("| tiny | 2 |")), "")
    expect(row.count("of fifo") == 1 and row.count("Jain") == len(MODES), f"sharing.md: equal tenants row {row!r}")
    expect("- **fair**: equal tenants worst" in equal, "sharing.md: no equal-tenants line for fair")
    expect("mx_equal2_tiny" not in md.split("## Matrix solo runs")[0], "sharing.md: equal tenants counted as a cell")
    doc = json.loads((out / "sharing.json").read_text())
    for mode in MODES:
        line = next((x for x in md.splitlines() if x.startswith(f"- **{mode}**: worst LC p99")), None)
        if not expect(line is not None, f"sharing.md: no worst case for {mode}"):
            continue
        # Where the host held some cell's run back (3+ wake-ups over 1 ms late), the worst case
        # is given again over the others.
        stalled = any(r["mode"] == mode and len(r["tenants"]) > 1 and r.get("host", {}).get("late_over_1ms", 0) >= 3
                      for r in doc["runs"])
        again = "cells whose run the host did not hold back" in line or "the host held back every cell's run" in line
        expect(stalled == again,
               f"sharing.md: {mode}'s worst case and the host stalls disagree: {line}")
    # bench/report.py fills a doc's matrix regions from the result.
    with tempfile.TemporaryDirectory() as tmp:
        doc = pathlib.Path(tmp) / "doc.md"
        doc.write_text("".join(f"<!-- BEGIN GENERATED: matrix-{s} -->\nPLACEHOLDER\n<!-- END GENERATED: matrix-{s} -->\n"
                               for s in ("environment", "matrix", "matrix-solo-runs",
                                         "matrix-native-solo-runs", "matrix-host-stalls",
                                         "matrix-equal-tenants")))
        report = pathlib.Path(__file__).with_name("report.py")
        rc = subprocess.run([sys.executable, str(report), str(out), "--bench", "sharing", "--region", "matrix",
                             "--docs", str(doc)]).returncode
        text = doc.read_text()
        expect(rc == 0 and "PLACEHOLDER" not in text and f"`mx_2lc2be_poisson_{US}`" in text, f"report.py: rc {rc}\n{text}")
        expect("never woke over 1 ms late" in text, f"report.py: no host stalls in\n{text}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--out", required=True, type=pathlib.Path)
    args = ap.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    cmd = [args.bench, "--matrix", "--quick", "--platform", "Portable", "--solo-repeats", str(REPEATS),
           "--out", str(args.out)]
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode
    expect(rc == 0, f"{' '.join(cmd)} exited {rc}")
    doc = json.loads((args.out / "sharing.json").read_text())
    check_header(doc)
    check_same_arrivals(doc, check_runs(doc))
    check_repeats(doc, (args.out / "sharing.md").read_text())
    check_report(args.out)
    for p in problems:
        print("FAIL:", p)
    print(f"{len(problems)} problems in {len(doc['runs'])} runs")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
