#!/usr/bin/env python3
"""The scaling curve of `hlomem report`, two binaries side by side.

Usage:
  scaling.py --new NEW_BIN --old OLD_BIN [--replicas 1,2,4,...] [--runs 3]
             [--work DIR] [--max-old-s 120] [--plot FILE.png|.svg] SOURCE.txt

SOURCE is one HLO module; scale_module.py replicates it N times for each N
of --replicas (written once under --work, default /tmp/hlomem-scaling).
For each size: one `report --stats` run of each binary gives the analysis
phase's seconds; then both whole processes are timed in turn (new, old, new,
old, ... under /usr/bin/time) and their medians give wall and CPU seconds
and peak memory.
An old binary slower than --max-old-s on a size is not timed further (its
single run is still shown). Prints a markdown table: times, peak RSS over
the input's size, the new/old ratio, and each binary's doubling ratio
(time at N over time at N/2).

Only the standard library, /usr/bin/time and scale_module.py are used;
--plot also draws the curve (seconds per MiB and peak RSS over the input,
against the input's size) with matplotlib.
"""
import argparse
import os
import re
import subprocess
import sys
import time

from perf_common import alternate

HERE = os.path.dirname(os.path.abspath(__file__))


def report_cmd(binary, path, stats=False):
    cmd = [binary, "report", "--format", "json", "-o", "/dev/null"]
    if stats:
        cmd.append("--stats")
    return cmd + [path]


def analyze_seconds(binary, path):
    """(analysis phase seconds, wall seconds) of one --stats run."""
    began = time.monotonic()
    proc = subprocess.run(report_cmd(binary, path, stats=True), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - began
    if proc.returncode != 0:
        sys.exit(f"{binary} failed on {path}:\n{proc.stderr}")
    match = re.search(r"^analyze\s+([\d.]+)", proc.stderr, re.M)
    return (float(match.group(1)) if match else float("nan")), wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--new", required=True)
    parser.add_argument("--old", required=True)
    parser.add_argument("--replicas", default="1,2,4,8,16,32,64")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", default="/tmp/hlomem-scaling")
    parser.add_argument("--max-old-s", type=float, default=120)
    parser.add_argument("--plot", help="also draw the curve into this .png or .svg")
    parser.add_argument("source")
    args = parser.parse_args()
    if args.plot:
        try:
            import matplotlib  # noqa: F401  (checked before minutes of runs)
        except ImportError:
            sys.exit("--plot needs matplotlib: pip install matplotlib")
    os.makedirs(args.work, exist_ok=True)
    rows = []
    for n in [int(r) for r in args.replicas.split(",")]:
        path = os.path.join(args.work, f"x{n}.hlo")
        if not os.path.exists(path):
            subprocess.run([sys.executable, os.path.join(HERE, "scale_module.py"), "--replicas",
                            str(n), args.source, path], check=True, stdout=subprocess.DEVNULL)
        size_mib = os.path.getsize(path) / 2**20
        new_analyze, _ = analyze_seconds(args.new, path)
        old_analyze, old_wall = analyze_seconds(args.old, path)
        old = args.old if old_wall <= args.max_old_s else None
        commands = {"new": report_cmd(args.new, path)}
        if old:
            commands["old"] = report_cmd(old, path)
        f = alternate(commands, args.runs)
        nan = {"wall": old_wall, "cpu": float("nan"), "rss": float("nan")}
        row = {
            "n": n, "mib": size_mib, "new_an": new_analyze, "old_an": old_analyze,
            "new_wall": f["new"]["wall"], "old_wall": f.get("old", nan)["wall"],
            "new_cpu": f["new"]["cpu"], "old_cpu": f.get("old", nan)["cpu"],
            "new_peak": f["new"]["rss"] / 2**20, "old_peak": f.get("old", nan)["rss"] / 2**20,
        }
        row["ratio"] = row["new_wall"] / row["old_wall"]
        rows.append(row)
        print(f"# x{n} done: {row}", file=sys.stderr, flush=True)

    def doubling(k, key):
        if k == 0 or rows[k - 1]["n"] * 2 != rows[k]["n"]:
            return "-"
        return f"{rows[k][key] / rows[k - 1][key]:.2f}"

    print("| replicas | input MiB | wall s new | wall s old | new/old (medians) "
          "| analysis s new | analysis s old | cpu s new | cpu s old | peak RSS / input new "
          "| peak RSS / input old | doubling wall new | doubling wall old "
          "| doubling analysis new | doubling analysis old |")
    print("|" + "---|" * 15)
    for k, r in enumerate(rows):
        print(f"| {r['n']} | {r['mib']:.1f} | {r['new_wall']:.2f} | {r['old_wall']:.2f} "
              f"| {r['ratio']:.3f} | {r['new_an']:.2f} | {r['old_an']:.2f} "
              f"| {r['new_cpu']:.2f} | {r['old_cpu']:.2f} "
              f"| {r['new_peak'] / r['mib']:.2f} | {r['old_peak'] / r['mib']:.2f} "
              f"| {doubling(k, 'new_wall')} | {doubling(k, 'old_wall')} "
              f"| {doubling(k, 'new_an')} | {doubling(k, 'old_an')} |")
    if args.plot:
        plot(rows, args.plot)
    return 0


def plot(rows, path):
    """Two panels against the input's size: wall seconds per MiB and peak RSS
    over the input, new and old; a band marks 20% around the largest size's
    figure, the flatness the performance issue asks for from 16x up."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mib = [r["mib"] for r in rows]
    fig, (time_ax, rss_ax) = plt.subplots(1, 2, figsize=(10, 4))
    panels = [(time_ax, "wall", "wall seconds per MiB of HLO text"),
              (rss_ax, "peak", "peak RSS / input size")]
    for ax, key, title in panels:
        for who, style in (("new", "o-"), ("old", "s--")):
            ax.plot(mib, [r[f"{who}_{key}"] / r["mib"] for r in rows], style, label=who)
        last = rows[-1][f"new_{key}"] / rows[-1]["mib"]
        ax.axhspan(last * 0.8, last * 1.2, color="0.9", label="largest size, +-20%")
        ax.set_xscale("log")
        ax.set_xlabel("input MiB (replicas: " + ", ".join(f"{r['n']}x" for r in rows) + ")")
        ax.set_title(title)
        ax.set_ylim(bottom=0)
        ax.legend()
    fig.tight_layout()
    # Written whole or not at all: a name beside the final one, then renamed.
    root, suffix = os.path.splitext(path)
    partial = f"{root}.partial{suffix}"
    fig.savefig(partial)
    os.replace(partial, path)
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
