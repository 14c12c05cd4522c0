#!/usr/bin/env python3
"""Tables and plots for the rgpu lab, generated from result files only.

    python3 lab/plot.py lab/results/2026-11-22-h200 [--docs docs/lab.md]

Reads every results.json under the given directory (as written by
`rgpu-lab run`), writes tables.md and one PNG per experiment next to them,
and, with --docs, replaces each `<!-- BEGIN GENERATED: key -->` ...
`<!-- END GENERATED: key -->` region of the docs file with the matching
table, so that no number in the docs is typed by hand.
"""

import argparse
import json
import pathlib
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Seed 000, tables 4 and 6 (Quadro P4000, CUDA 10.1, time-slicing): kernel
# time in ms; rows are copies of the measured kernel (1-3), columns the
# number of persistent kernels beside them (0-2). The seed's own numbers,
# kept here only to be set beside ours.
SEED000_PERSISTENT_MS = {
    "core": [[13533.86, 27783.45, 42966.28],
             [27712.25, 41838.74, 58168.23],
             [41343.26, 57592.57, 73891.55]],
    "gmem": [[11679.13, 24597.12, 36846.69],
             [24106.37, 36709.97, 49034.93],
             [36054.51, 48818.85, 61197.95]],
}
KERNEL_TITLES = {"gmem": "G-mem", "smem": "S-mem", "core": "core-intensive"}
SEED001_GROUPS = [1, 2, 4, 10, 20, 500, "rule"]


# ---------------------------------------------------------------- loading

def load_results(root):
    runs = []
    for path in sorted(pathlib.Path(root).rglob("results.json")):
        with open(path) as f:
            run = json.load(f)
        run["_path"] = path
        run["mode_label"] = mode_label(run)
        runs.append(run)
    return runs


def mode_label(run):
    """The mode, with rgpud's policy where one was given and "-group" for a
    context group (the runner's directory names): runs of one scenario under two
    policies, or with and without a group, are two columns, not one."""
    if run["mode"] != "rgpu":
        return run["mode"]
    options = run["environment"].get("options", {})
    policy = options.get("policy")
    return "rgpu" + (f"-{policy}" if policy else "") + ("-group" if options.get("context_group") else "")


def copies(config):
    return {p["name"]: p["copies"] for p in config["processes"]}


def arg(config, name, key):
    for p in config["processes"]:
        if p["name"] == name:
            return p["args"].get(key)
    return None


def median_ms(config, name, key="time_ms"):
    summary = config.get("summary", {})
    if name not in summary:
        return None
    return summary[name][key]["median"]


def reports(config, name):
    return [r for rnd in config.get("rounds", []) for r in rnd if r["name"] == name]


def find(run, **wanted):
    """The config whose copy counts are exactly `wanted` (name -> copies)."""
    for config in run["configs"]:
        if "summary" in config and copies(config) == wanted:
            return config
    return None


def fmt(value, digits=1):
    return "–" if value is None else f"{value:,.{digits}f}"


def value_and_ratio(value, base, digits=0):
    """'1,204 (1.61x)', or '–' where the config did not run."""
    if value is None:
        return "–"
    return f"{fmt(value, digits)} ({fmt(value / base if base else None, 2)}x)"


def environment_line(run):
    env = run["environment"]
    device = env.get("device", {})
    smi = env.get("nvidia_smi") or ""
    driver = smi.split(", ")[1] if smi.count(", ") >= 1 else device.get("driver_version", "?")
    api = device.get("api", "?")
    if api == "cuda":
        stack = f"CUDA runtime {device.get('cuda_runtime')}"
    else:
        stack = f"{device.get('platform')} ({device.get('platform_version')})"
    return (f"{device.get('device', '?')}, driver {driver}, {stack}; mode `{run['mode_label']}`; "
            f"commit `{env.get('git_commit')}`; {env.get('date_utc')}; "
            f"{run['scenario']['rounds']} rounds; CPU {env.get('cpu_model')} x{env.get('cpu_count')}")


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# ------------------------------------------------------- seed 000 tables 1-2

def tables_1_2(run, out_dir):
    """Tables 1 and 2: performance of G-mem / S-mem relative to one copy alone."""
    sections = {}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, (measured, other) in zip(axes, [("gmem", "smem"), ("smem", "gmem")]):
        solo = find(run, **{measured: 1})
        if solo is None:
            continue
        solo_ms = median_ms(solo, measured)
        columns = [(f"{KERNEL_TITLES[measured]} only", {}),
                   ("+ core-intensive", {"core": 1}),
                   (f"+ {KERNEL_TITLES[other]}", {other: 1})]
        rows, bars = [], []
        for n in (1, 2, 3):
            row, bar = [str(n)], []
            for _, extra in columns:
                config = find(run, **{measured: n}, **extra)
                ms = median_ms(config, measured) if config else None
                perf = 100.0 * solo_ms / ms if ms else None
                row.append(f"{fmt(ms)} ms ({fmt(perf, 0)}%)")
                bar.append(perf or 0)
            rows.append(row)
            bars.append(bar)
        key = "table1" if measured == "gmem" else "table2"
        sections[key] = markdown_table(
            [f"{KERNEL_TITLES[measured]} copies"] + [c for c, _ in columns], rows)
        width = 0.25
        for i, (label, _) in enumerate(columns):
            ax.bar([n + (i - 1) * width for n in (1, 2, 3)], [b[i] for b in bars], width, label=label)
        ax.set_xticks([1, 2, 3])
        ax.set_xlabel(f"copies of {KERNEL_TITLES[measured]}")
        ax.set_title(f"{KERNEL_TITLES[measured]} ({run['mode_label']})")
        ax.axhline(100, color="grey", linewidth=0.5)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("performance vs one copy alone (%)")
    fig.tight_layout()
    png = out_dir / f"tables1-2-{run['mode_label']}.png"
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return sections, png


# The columns of the cross-mode tables, in the order they are read: CUDA
# time-slicing and MPS, then the OpenCL kernels natively and through rgpud.
COMPARE_MODES = ["timeslice", "mps", "opencl", "rgpu-fifo", "rgpu-fair"]


def tables_1_2_compare(runs, out_dir):
    """Seed 000 tables 1-2 with one column per sharing mode: each measured
    kernel's performance against its own solo time in that mode (CUDA and
    OpenCL kernels differ in solo time, so each mode is its own baseline),
    and the core-intensive tenant's time in ms beside them."""
    by_mode = {r["mode_label"]: r for r in runs}
    modes = [m for m in COMPARE_MODES if m in by_mode] + sorted(set(by_mode) - set(COMPARE_MODES))
    if len(modes) < 2:
        return {}, None
    sections = {}
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5), sharey=True)
    for ax, (measured, other) in zip(axes, [("gmem", "smem"), ("smem", "gmem")]):
        rows, labels, perf_by_mode = [], [], {m: [] for m in modes}
        for extra_name, extra in [("", {}), (" + core", {"core": 1}),
                                  (f" + {KERNEL_TITLES[other]}", {other: 1})]:
            for n in (1, 2, 3):
                label = f"{KERNEL_TITLES[measured]} x{n}{extra_name}"
                row = [label]
                for mode in modes:
                    run = by_mode[mode]
                    solo = find(run, **{measured: 1})
                    config = find(run, **{measured: n}, **extra)
                    solo_ms = median_ms(solo, measured) if solo else None
                    ms = median_ms(config, measured) if config else None
                    perf = 100.0 * solo_ms / ms if ms and solo_ms else None
                    row.append("–" if ms is None else f"{fmt(perf, 0)}% ({fmt(ms, 0)} ms)")
                    perf_by_mode[mode].append(perf or 0)
                rows.append(row)
                labels.append(label.replace(f"{KERNEL_TITLES[measured]} ", ""))
        sections[f"compare-{measured}"] = markdown_table(
            [f"{KERNEL_TITLES[measured]}: copies, beside"] + [f"`{m}`" for m in modes], rows)
        width = 0.8 / len(modes)
        for i, mode in enumerate(modes):
            ax.bar([x + (i - (len(modes) - 1) / 2) * width for x in range(len(labels))],
                   perf_by_mode[mode], width, label=mode)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
        ax.set_title(f"{KERNEL_TITLES[measured]}: performance vs alone, by sharing mode")
        ax.axhline(100, color="grey", linewidth=0.5)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("performance vs one copy alone (%)")
    fig.tight_layout()
    png = out_dir / "tables1-2-compare.png"
    fig.savefig(png, dpi=110)
    plt.close(fig)

    core_rows = []
    for measured in ("gmem", "smem"):
        for n in (1, 2, 3):
            row = [f"beside {KERNEL_TITLES[measured]} x{n}"]
            for mode in modes:
                config = find(by_mode[mode], **{measured: n}, core=1)
                row.append(f"{fmt(median_ms(config, 'core') if config else None, 0)} ms")
            core_rows.append(row)
    sections["compare-core"] = markdown_table(
        ["core-intensive"] + [f"`{m}`" for m in modes], core_rows)
    # Alone, the device-event time against the host's wall time for the round
    # (GO to the last completion): the gap is what the path to the device adds.
    alone_rows = []
    for measured in ("gmem", "smem"):
        row = [f"{KERNEL_TITLES[measured]} x1"]
        for mode in modes:
            config = find(by_mode[mode], **{measured: 1})
            kernel = median_ms(config, measured) if config else None
            wall = median_ms(config, measured, "wall_ms") if config else None
            row.append("–" if kernel is None else
                       f"{fmt(kernel)} / {fmt(wall)} ms (+{fmt(wall - kernel)})")
        alone_rows.append(row)
    sections["compare-alone"] = markdown_table(
        ["alone: kernels / wall"] + [f"`{m}`" for m in modes], alone_rows)
    header = "; ".join(
        f"`{m}`: commit `{by_mode[m]['environment'].get('git_commit')}`, "
        f"{by_mode[m]['scenario']['rounds']} rounds, {by_mode[m]['environment'].get('date_utc')}"
        for m in modes)
    return {key: f"Columns: {header}.\n\n{table}" for key, table in sections.items()}, png


# ------------------------------------------------------- seed 000 tables 4-7

def persistent_matrix(run, kernel, baseline_run=None):
    """Rows: copies 1-3; columns: persistent 0-2; median kernel time (ms)."""
    matrix = []
    for n in (1, 2, 3):
        row = []
        for p in (0, 1, 2):
            wanted = {kernel: n, "persistent": p} if p else {kernel: n}
            config = find(run, **wanted) or (find(baseline_run, **wanted) if baseline_run else None)
            row.append(median_ms(config, kernel) if config else None)
        matrix.append(row)
    return matrix


def persistent_tables(run, out_dir, baseline_run=None, suffix=""):
    sections = {}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, kernel in zip(axes, ("core", "gmem")):
        ours = persistent_matrix(run, kernel, baseline_run)
        if all(v is None for row in ours for v in row):
            continue
        seed = SEED000_PERSISTENT_MS[kernel]
        base = ours[0][0]
        rows = []
        for i, n in enumerate((1, 2, 3)):
            cells = []
            for j in range(3):
                ms = ours[i][j]
                cells.append(f"{fmt(ms)} ({fmt(ms / base if ms and base else None, 2)}x)")
            seed_cells = [f"{seed[i][j] / seed[0][0]:.2f}x" for j in range(3)]
            rows.append([str(n)] + cells + seed_cells)
        sections[f"persistent-{kernel}{suffix}"] = markdown_table(
            [f"{KERNEL_TITLES[kernel]} copies \\ persistent", "0", "1", "2",
             "seed 0", "seed 1", "seed 2"], rows)
        # Slowdown per row against that row's no-persistent time, as seed tables 5 and 7.
        for i, n in enumerate((1, 2, 3)):
            if ours[i][0]:
                ax.plot([0, 1, 2], [v / ours[i][0] if v else None for v in ours[i]], "o-",
                        label=f"{n} cop{'y' if n == 1 else 'ies'} (ours)")
            ax.plot([0, 1, 2], [v / seed[i][0] for v in seed[i]], "x--", alpha=0.5,
                    label=f"{n} (seed, P4000)")
        ax.set_xticks([0, 1, 2])
        ax.set_xlabel("persistent kernels beside")
        ax.set_ylabel("time / time without persistent")
        ax.set_title(f"{KERNEL_TITLES[kernel]} ({run['mode_label']}{suffix})")
        ax.legend(fontsize=7)
    fig.tight_layout()
    png = out_dir / f"persistent-{run['mode_label']}{suffix}.png"
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return sections, png


def poll_rate_table(run, out_dir):
    solo = find(run, gmem=1)
    solo_ms = median_ms(solo, "gmem") if solo else None
    rows, xs, ys = [], [], []
    for config in run["configs"]:
        if "summary" not in config or copies(config).get("persistent", 0) != 1:
            continue
        sleep_ns = int(arg(config, "persistent", "poll_sleep_ns") or 0)
        ms = median_ms(config, "gmem")
        rows.append([str(sleep_ns), f"{fmt(ms)} ms",
                     f"{fmt(ms / solo_ms if solo_ms else None, 2)}x"])
        xs.append(max(sleep_ns, 1))
        ys.append(ms / solo_ms if solo_ms else 0)
    table = markdown_table(["poll back-off (ns)", "G-mem time", "vs G-mem alone"],
                           [["(no persistent)", f"{fmt(solo_ms)} ms", "1.00x"]] + rows)
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.semilogx(xs, ys, "o-")
    ax.set_xlabel("back-off between polls (ns; 0 drawn at 1)")
    ax.set_ylabel("G-mem time / G-mem alone")
    ax.set_title(f"idle persistent kernel, {run['mode_label']}")
    fig.tight_layout()
    png = out_dir / f"pollrate-{run['mode_label']}.png"
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return {"pollrate": table}, png


# ----------------------------------------------------------------- seed 001

def cpu_tenant_stretch(config):
    """Wall time over the CPU time each tenant actually got: 1.0 means it
    never waited for a core. It cancels the CPU's own speed, which drifted
    between machines and runs (one CPU tenant alone took 0.72-0.98 s)."""
    rs = reports(config, "cpu")
    if not rs:
        return None
    return statistics.mean(r["wall_ms"] for r in rs) / statistics.mean(r["metrics"]["cpu_ms"] for r in rs)


def cpu_tenant_ms(config):
    """Mean wall time of the CPU tenants over copies and rounds. With more
    tenants than cores some finish while others still run, so the mean is
    what the tenants got on average; the median would pick one side."""
    walls = [r["wall_ms"] for r in reports(config, "cpu")]
    return statistics.mean(walls) if walls else None


def seed001_tables(run, out_dir, suffix="", supplement=None):
    # A supplement run (same scenario and mode, run later with --only) fills
    # configs the main run did not reach; its own header is in its file.
    configs = run["configs"] + (supplement["configs"] if supplement else [])

    def config_for(cpu, groups):
        for config in configs:
            if "summary" not in config:
                continue
            c = copies(config)
            if c.get("cpu", 0) != cpu or c.get("gpu-job", 0) != (0 if groups is None else 1):
                continue
            if groups is None or str(arg(config, "gpu-job", "groups")) == str(groups):
                return config
        return None

    cpu_rows, gpu_rows, share_rows, stretch_rows = [], [], [], []
    gpu_solo = median_ms(config_for(0, 1), "gpu-job", "wall_ms") if config_for(0, 1) else None
    fig, (ax_cpu, ax_gpu) = plt.subplots(1, 2, figsize=(11, 4))
    for cpu in (1, 2, 3, 4):
        alone = config_for(cpu, None)
        alone_ms = cpu_tenant_ms(alone) if alone else None
        cpu_row, gpu_row, share_row = [str(cpu), fmt(alone_ms, 0)], [str(cpu)], [str(cpu)]
        cpu_curve, gpu_curve = [], []
        stretch_row = [str(cpu), fmt(cpu_tenant_stretch(alone) if alone else None, 2)]
        for groups in SEED001_GROUPS:
            config = config_for(cpu, groups)
            ms = cpu_tenant_ms(config) if config else None
            stretch_row.append(fmt(cpu_tenant_stretch(config) if config else None, 2))
            cpu_row.append(value_and_ratio(ms, alone_ms))
            cpu_curve.append(cpu_tenant_stretch(config) if config else None)
            gpu_ms = median_ms(config, "gpu-job", "wall_ms") if config else None
            gpu_row.append(value_and_ratio(gpu_ms, gpu_solo))
            gpu_curve.append(gpu_ms / gpu_solo if gpu_ms and gpu_solo else None)
            if config:
                rs = reports(config, "gpu-job")
                share = statistics.median(r["metrics"]["process_cpu_ms"] / r["wall_ms"] for r in rs)
                share_row.append(f"{100 * share:.0f}%")
            else:
                share_row.append("–")
        cpu_rows.append(cpu_row)
        stretch_rows.append(stretch_row)
        gpu_rows.append(gpu_row)
        share_rows.append(share_row)
        xs = list(range(len(SEED001_GROUPS)))
        line, = ax_cpu.plot(xs, cpu_curve, "o-", label=f"{cpu} CPU tenant{'s' if cpu > 1 else ''}")
        if alone:  # the same tenants with no GPU job beside them
            ax_cpu.axhline(cpu_tenant_stretch(alone), color=line.get_color(), linestyle="--",
                           linewidth=0.8)
        ax_gpu.plot(xs, gpu_curve, "o-", label=f"beside {cpu} CPU")
    solo_row = ["alone"]
    for groups in SEED001_GROUPS:
        config = config_for(0, groups)
        ms = median_ms(config, "gpu-job", "wall_ms") if config else None
        solo_row.append(value_and_ratio(ms, gpu_solo))
    group_names = [str(g) for g in SEED001_GROUPS]
    for ax, title, ylabel in ((ax_cpu, "CPU tenants (dashed: no GPU job)",
                               "CPU tenant wall / CPU time it got"),
                              (ax_gpu, "GPU job", "GPU job time / GPU job alone, unsplit")):
        ax.set_xticks(range(len(group_names)))
        ax.set_xticklabels(group_names)
        ax.set_xlabel("thread groups per launch")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title} ({run['mode_label']}{suffix})")
        ax.axhline(1, color="grey", linewidth=0.5)
        ax.legend(fontsize=7)
    fig.tight_layout()
    png = out_dir / f"seed001-{run['mode_label']}{suffix}.png"
    fig.savefig(png, dpi=110)
    plt.close(fig)
    header = ["CPU tenants", "no GPU job"] + [f"groups {g}" for g in group_names]
    return {
        f"seed001-cpu{suffix}": markdown_table(header, cpu_rows),
        f"seed001-stretch{suffix}": markdown_table(header, stretch_rows),
        f"seed001-gpu{suffix}": markdown_table(["GPU job beside"] + [f"groups {g}" for g in group_names],
                                      [solo_row] + gpu_rows),
        f"seed001-gpu-cpu-share{suffix}": markdown_table(
            ["GPU job beside"] + [f"groups {g}" for g in group_names], share_rows),
    }, png


# ------------------------------------------------------------ other reports

DEVICE_METRICS = [
    ("copy_bandwidth_gbps", "device-to-device copy (read + write)", "GB/s"),
    ("fma_fp64_tflops", "FP64 FMA, CUDA cores", "TFLOP/s"),
    ("fma_fp32_tflops", "FP32 FMA, CUDA cores", "TFLOP/s"),
    ("fma_fp16x2_tflops", "FP16 (half2) FMA, CUDA cores", "TFLOP/s"),
    ("fma_bf16x2_tflops", "BF16 (bf16x2) FMA, CUDA cores", "TFLOP/s"),
    ("gemm_fp64_tflops", "FP64 GEMM 8192^3, cuBLAS", "TFLOP/s"),
    ("gemm_fp32_tflops", "FP32 GEMM 8192^3, cuBLAS (pedantic, no TF32)", "TFLOP/s"),
    ("gemm_tf32_tflops", "TF32 GEMM 8192^3, cuBLAS", "TFLOP/s"),
    ("gemm_fp16_tflops", "FP16 GEMM 8192^3, cuBLAS (FP32 accumulate)", "TFLOP/s"),
    ("gemm_bf16_tflops", "BF16 GEMM 8192^3, cuBLAS (FP32 accumulate)", "TFLOP/s"),
]


def device_report_table(run):
    config = run["configs"][0]
    metrics = config["summary"]["device-report"]["metrics"]
    rows = [[label, f"{metrics[key]:,.1f} {unit}"] for key, label, unit in DEVICE_METRICS
            if key in metrics]
    return {"device-report": markdown_table(["measurement", "value"], rows)}


def solo_table(run):
    rows = []
    for config in run["configs"]:
        if "summary" not in config:
            continue
        for name in config["summary"]:
            if len(config["processes"]) > 1 and name == "persistent":
                continue
            label = config["label"]
            per_launch = statistics.median(
                ms for r in reports(config, name) for ms in (r["kernel_ms"] or [r["time_ms"]]))
            rows.append([label, name, f"{per_launch:,.2f} ms"])
    return {f"solo-{run['mode_label']}": markdown_table(["config", "tenant", "median per launch"], rows)}


# ------------------------------------------------------------------- output

def splice_docs(docs_path, sections):
    text = docs_path.read_text()
    for key, body in sections.items():
        pattern = re.compile(
            rf"(<!-- BEGIN GENERATED: {re.escape(key)} -->\n).*?(<!-- END GENERATED: {re.escape(key)} -->)",
            re.S)
        text, count = pattern.subn(lambda m: m.group(1) + body + "\n" + m.group(2), text)
        if count == 0:
            print(f"note: {docs_path} has no region for '{key}'", file=sys.stderr)
    docs_path.write_text(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="directory holding results.json files")
    parser.add_argument("--docs", help="docs file whose GENERATED regions to refresh")
    args = parser.parse_args()
    root = pathlib.Path(args.results)
    runs = load_results(root)
    if not runs:
        sys.exit(f"no results.json under {root}")
    by_key = {(r["scenario"]["name"], r["mode_label"], r["_path"].parent.parent.name): r
              for r in runs}

    sections, document = {}, ["# rgpu lab results", "",
                              f"Generated by `lab/plot.py` from the result files under `{root}`.", ""]
    for run in runs:
        name, mode = run["scenario"]["name"], run["mode_label"]
        tag = run["_path"].parent.parent.name  # the directory the scenario's modes sit in
        out_dir = run["_path"].parent
        produced, png = {}, None
        if name == "seed000-tables1-2":
            produced, png = tables_1_2(run, out_dir)
        elif name == "seed000-persistent":
            produced, png = persistent_tables(run, out_dir)
        elif name == "seed000-persistent-busy":
            baseline = by_key.get(("seed000-persistent", mode, "seed000-persistent"))
            produced, png = persistent_tables(run, out_dir, baseline, suffix="-busy")
        elif name == "seed000-persistent-pollrate":
            produced, png = poll_rate_table(run, out_dir)
        elif name == "seed001-cpu-tenants" and not tag.endswith("-supplement"):
            supplement = by_key.get((name, mode, tag + "-supplement"))
            produced, png = seed001_tables(run, out_dir, tag[len(name):], supplement)
        elif name == "device-report":
            produced = device_report_table(run)
        elif name == "solo-times":
            produced = solo_table(run)
        if not produced:
            continue
        document += [f"## {name} ({mode}, {tag})", "", environment_line(run), ""]
        for key, table in produced.items():
            full_key = f"{key}-{mode}" if not key.endswith(mode) else key
            sections[full_key] = environment_line(run) + "\n\n" + table
            document += [f"### {full_key}", "", table, ""]
        if png:
            document += [f"![{name} {mode}]({png.relative_to(root)})", ""]
    # Seed 000 tables 1-2 once more, every sharing mode side by side.
    compare_runs = [r for r in runs if r["scenario"]["name"] == "seed000-tables1-2"
                    and r["_path"].parent.parent.name == "seed000-tables1-2"]
    if compare_runs:
        produced, png = tables_1_2_compare(compare_runs, compare_runs[0]["_path"].parent.parent)
        if produced:
            document += ["## seed000-tables1-2, every mode", ""]
            for key, table in produced.items():
                sections[key] = table
                document += [f"### {key}", "", table, ""]
            document += [f"![seed000-tables1-2, every mode]({png.relative_to(root)})", ""]
    (root / "tables.md").write_text("\n".join(document))
    print(f"wrote {root / 'tables.md'} ({len(sections)} tables)")
    if args.docs:
        splice_docs(pathlib.Path(args.docs), sections)


if __name__ == "__main__":
    main()
