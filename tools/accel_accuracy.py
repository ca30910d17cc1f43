#!/usr/bin/env python3
"""Prints how exactly hlomem reproduces XLA:GPU's and XLA:TPU's buffer assignment.

For every case under testdata/accel/<target>/<case>/, runs `hlomem report
--format json` on the after-optimizations HLO file and compares, per memory
space (allocation colour), hlomem's sum of allocation sizes with the sum that
XLA's own -buffer-assignment.txt gives (read here, independently of hlomem),
and the memory_analysis() fields the dump determines.

    tools/accel_accuracy.py [--hlomem build/cmd/hlomem/hlomem] [--verbose] [TARGET...]
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ACCEL = os.path.join(ROOT, "testdata", "accel")
ALLOCATION = re.compile(r"^allocation \d+: size (\d+)(?:, color (\d+))?", re.M)
# The memory_analysis() fields the dump determines, per backend, and hlomem's
# names for them. XLA:TPU's temp_size_in_bytes is not the buffer assignment's
# preallocated temp (it is 0 for programs with a 82 KiB temp, and above it
# for others), so it is not compared; its total_allocation_bytes and
# peak_memory_in_bytes are the HBM allocations' sum and XLA's peak.
FIELDS = {
    "gpu": [("argument_bytes", "argument_size_in_bytes"), ("output_bytes", "output_size_in_bytes"),
            ("alias_bytes", "alias_size_in_bytes"), ("temp_bytes", "temp_size_in_bytes"),
            ("peak_memory_bytes", "peak_memory_in_bytes")],
    "tpu": [("argument_bytes", "argument_size_in_bytes"), ("output_bytes", "output_size_in_bytes"),
            ("alias_bytes", "alias_size_in_bytes"), ("total_bytes", "total_allocation_bytes"),
            ("peak_memory_bytes", "peak_memory_in_bytes")],
}


def xla_color_totals(path):
    totals = collections.Counter()
    with open(path, encoding="utf-8", errors="replace") as f:
        for m in ALLOCATION.finditer(f.read()):
            totals[int(m.group(2) or 0)] += int(m.group(1))
    return dict(totals)


def cases(targets):
    for target in sorted(os.listdir(ACCEL)):
        if targets and target not in targets:
            continue
        for case_dir in sorted(glob.glob(os.path.join(ACCEL, target, "*", ""))):
            hlo = [p for p in glob.glob(os.path.join(case_dir, "*after_optimizations.txt"))]
            assignment = glob.glob(os.path.join(case_dir, "*after_optimizations-buffer-assignment.txt"))
            if len(hlo) == 1 and len(assignment) == 1:
                yield target, os.path.basename(case_dir.rstrip("/")), hlo[0], assignment[0], case_dir


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hlomem", default=os.path.join(ROOT, "build/cmd/hlomem/hlomem"))
    parser.add_argument("--verbose", action="store_true", help="a line per case")
    parser.add_argument("targets", nargs="*", help="e.g. tpu_v5e gpu_h100 (default: all)")
    args = parser.parse_args()
    per_backend = collections.defaultdict(lambda: collections.Counter())
    for target, name, hlo, assignment, case_dir in cases(args.targets):
        backend = target.split("_")[0]
        out = subprocess.run([args.hlomem, "report", "--format", "json", hlo],
                             capture_output=True, text=True)
        tally = per_backend[backend]
        tally["modules"] += 1
        if out.returncode != 0:
            tally["failed"] += 1
            print(f"{target:10} {name:44} hlomem failed: {out.stderr.strip()[:100]}")
            continue
        module = json.loads(out.stdout)["modules"][0]
        computed = {s["color"]: s["computed_bytes"] or 0 for s in module["memory_spaces"]}
        xla = xla_color_totals(assignment)
        colors = sorted(set(computed) | set(xla))
        exact = all(computed.get(c, 0) == xla.get(c, 0) for c in colors)
        close = all(abs(computed.get(c, 0) - xla.get(c, 0)) <= 0.005 * max(xla.get(c, 0), 1)
                    for c in colors)
        tally["exact"] += exact
        tally["close"] += close
        for c in colors:
            space = next((sp["name"] for sp in module["memory_spaces"] if sp["color"] == c), str(c))
            tally[("space", space, "n")] += 1
            tally[("space", space, "exact")] += computed.get(c, 0) == xla.get(c, 0)
            tally[("space", space, "close")] += (abs(computed.get(c, 0) - xla.get(c, 0)) <=
                                                0.005 * max(xla.get(c, 0), 1))
        ma_path = os.path.join(case_dir, "memory_analysis.json")
        ma_ok = None
        if os.path.exists(ma_path):
            ma = json.load(open(ma_path))
            ma_diffs = [f"{theirs} {module['computed'][ours] - ma[theirs]:+d}"
                        for ours, theirs in FIELDS[backend] if module["computed"][ours] != ma[theirs]]
            ma_ok = not ma_diffs
            tally["ma_cases"] += 1
            tally["ma_exact"] += ma_ok
        if args.verbose or not exact or ma_ok is False:
            deltas = ", ".join(f"color {c}: {computed.get(c, 0) - xla.get(c, 0):+d} "
                               f"({(computed.get(c, 0) - xla.get(c, 0)) / max(xla.get(c, 0), 1):+.2%})"
                               for c in colors if computed.get(c, 0) != xla.get(c, 0))
            ma_text = "" if ma_ok is None else ("  memory_analysis exact" if ma_ok else
                                                "  memory_analysis differs: " + ", ".join(ma_diffs))
            print(f"{target:10} {name:44} {'exact' if exact else deltas}{ma_text}")
    print()
    print("memory_analysis() fields compared: " +
          "; ".join(f"{b}: {', '.join(t for _, t in f)}" for b, f in FIELDS.items()))
    failed = False
    for backend, t in sorted(per_backend.items()):
        print(f"{backend}: {t['exact']}/{t['modules']} modules exact in every memory space, "
              f"{t['close']}/{t['modules']} within 0.5%, "
              f"{t['ma_exact']}/{t['ma_cases']} memory_analysis() exact")
        spaces = sorted({k[1] for k in t if isinstance(k, tuple)})
        for space in spaces:
            print(f"  {space:8} {t[('space', space, 'exact')]}/{t[('space', space, 'n')]} exact, "
                  f"{t[('space', space, 'close')]}/{t[('space', space, 'n')]} within 0.5%")
        failed |= t["exact"] != t["modules"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
