#!/usr/bin/env python3
"""Prints how exactly hlomem reproduces XLA:GPU's and XLA:TPU's buffer assignment.

For every case under testdata/accel/<target>/<case>/, runs `hlomem report
--format json` on the after-optimizations HLO file and compares, per memory
space (allocation colour), hlomem's sum of allocation sizes with the sum that
XLA's own -buffer-assignment.txt gives (read here, independently of hlomem),
and the memory_analysis() fields the dump determines.

Then the same for the real trainers of testdata/trainers/<target>/<case>/
(tools/gen_trainer_testdata.py: transformers and keras-hub train steps, FSDP x
tensor parallel, sized at the chip's HBM limit), as a separate table: per
program the HBM total of hlomem and of XLA (bytes, difference, %), the other
memory spaces, and for a program that failed with E1000 CompileTimeHbmOom the
figure XLA's message states beside hlomem's.

    tools/accel_accuracy.py [--hlomem build/cmd/hlomem/hlomem] [--verbose] [--no-trainers]
                            [--trainers-only] [TARGET...]
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
TRAINERS = os.path.join(ROOT, "testdata", "trainers")
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


def cases(targets, root=ACCEL):
    if not os.path.isdir(root):
        return
    for target in sorted(os.listdir(root)):
        if targets and target not in targets:
            continue
        for case_dir in sorted(glob.glob(os.path.join(root, target, "*", ""))):
            hlo = [p for p in glob.glob(os.path.join(case_dir, "*after_optimizations.txt"))]
            assignment = glob.glob(os.path.join(case_dir, "*after_optimizations-buffer-assignment.txt"))
            if len(hlo) == 1 and len(assignment) == 1:
                yield target, os.path.basename(case_dir.rstrip("/")), hlo[0], assignment[0], case_dir


GIB = 2 ** 30
UNIT = {"": 1, "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}


def xla_figure_bytes(text):
    """'15.75G' (XLA's E1000 message: binary units, two decimals) -> bytes (approximate)."""
    m = re.fullmatch(r"([\d.]+)([KMGT]?)", text or "")
    return float(m.group(1)) * UNIT[m.group(2)] if m else None


def trainers_table(hlomem, targets, verbose):
    """The real-trainer table (testdata/trainers). Returns True when every program is exact
    in every memory space."""
    rows = list(cases(targets, TRAINERS))
    if not rows:
        return True
    tally = collections.Counter()
    print()
    print("Real trainers (testdata/trainers): hlomem vs XLA's buffer assignment, per memory space")
    print(f"{'target':8} {'program':34} {'mesh':5} {'batch x seq':11} {'verdict':9} "
          f"{'HBM hlomem':>12} {'HBM XLA':>12} {'diff':>9} {'%':>8}  other spaces (hlomem/XLA)")
    oom_lines = []
    for target, name, hlo, assignment, case_dir in rows:
        with open(os.path.join(case_dir, "case.json")) as f:
            info = json.load(f)
        out = subprocess.run([hlomem, "report", "--format", "json", hlo],
                             capture_output=True, text=True)
        tally["modules"] += 1
        if out.returncode != 0:
            tally["failed"] += 1
            print(f"{target:8} {name:34} hlomem failed: {out.stderr.strip()[:100]}")
            continue
        module = json.loads(out.stdout)["modules"][0]
        computed = {sp["color"]: sp["computed_bytes"] or 0 for sp in module["memory_spaces"]}
        names = {sp["color"]: sp["name"] for sp in module["memory_spaces"]}
        xla = xla_color_totals(assignment)
        colors = sorted(set(computed) | set(xla))
        exact = all(computed.get(c, 0) == xla.get(c, 0) for c in colors)
        close = all(abs(computed.get(c, 0) - xla.get(c, 0)) <= 0.005 * max(xla.get(c, 0), 1)
                    for c in colors)
        tally["exact"] += exact
        tally["close"] += close
        for c in colors:
            space = names.get(c, str(c))
            tally[("space", space, "n")] += 1
            tally[("space", space, "exact")] += computed.get(c, 0) == xla.get(c, 0)
            tally[("space", space, "close")] += (abs(computed.get(c, 0) - xla.get(c, 0)) <=
                                                0.005 * max(xla.get(c, 0), 1))
        h, x = computed.get(0, 0), xla.get(0, 0)
        others = ", ".join(f"{names.get(c, c)} {computed.get(c, 0)}/{xla.get(c, 0)}"
                           + ("" if computed.get(c, 0) == xla.get(c, 0) else " DIFFERS")
                           for c in colors if c != 0)
        mesh = "%dx%d" % (info["mesh"]["fsdp"], info["mesh"]["tensor"])
        verdict = "fits" if info["verdict"] == "fits" else "E1000"
        print(f"{target:8} {name:34} {mesh:5} {info['batch']:>4} x {info['seq']:<5} {verdict:9} "
              f"{h:>12} {x:>12} {h - x:>+9} {(h - x) / max(x, 1):>+8.3%}  {others}")
        if info["verdict"] != "fits":
            req, avail = info.get("oom_required"), info.get("oom_available")
            oom_lines.append(
                f"{target:8} {name:34} XLA: {info.get('oom_what', '?')} {req} exceed available "
                f"HBM {avail}; XLA's HBM assignment {x / GIB:.2f}G ({x} B); hlomem "
                f"{h / GIB:.2f}G ({h} B)"
                + (f", {h / xla_figure_bytes(avail):.2%} of the available figure"
                   if xla_figure_bytes(avail) else ""))
        if verbose and not exact:
            print("         " + ", ".join(f"color {c}: {computed.get(c, 0) - xla.get(c, 0):+d}"
                                         for c in colors if computed.get(c, 0) != xla.get(c, 0)))
    if oom_lines:
        print()
        print("E1000 CompileTimeHbmOom programs: the figures XLA's message states (G = GiB, two "
              "decimals) against hlomem's HBM total")
        for line in oom_lines:
            print(line)
    print()
    print(f"trainers: {tally['exact']}/{tally['modules']} modules exact in every memory space, "
          f"{tally['close']}/{tally['modules']} within 0.5%")
    for space in sorted({k[1] for k in tally if isinstance(k, tuple)}):
        print(f"  {space:8} {tally[('space', space, 'exact')]}/{tally[('space', space, 'n')]} "
              f"exact, {tally[('space', space, 'close')]}/{tally[('space', space, 'n')]} "
              "within 0.5%")
    return tally["exact"] == tally["modules"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hlomem", default=os.path.join(ROOT, "build/cmd/hlomem/hlomem"))
    parser.add_argument("--verbose", action="store_true", help="a line per case")
    parser.add_argument("--no-trainers", action="store_true",
                        help="leave out the testdata/trainers table")
    parser.add_argument("--trainers-only", action="store_true",
                        help="only the testdata/trainers table")
    parser.add_argument("targets", nargs="*", help="e.g. tpu_v5e gpu_h100 (default: all)")
    args = parser.parse_args()
    if args.trainers_only:
        return 0 if trainers_table(args.hlomem, args.targets, args.verbose) else 1
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
    if not args.no_trainers:
        failed |= not trainers_table(args.hlomem, args.targets, args.verbose)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
