#!/usr/bin/env python3
"""Prints how exactly hlomem reproduces XLA's buffer assignment.

For every case of testdata/jax/MANIFEST.json, runs `hlomem report --format
json` on the after-optimizations HLO text alone (no XLA file beside it) and
compares with XLA's own "Total bytes used" and jax's memory_analysis().

    tools/accuracy.py [--hlomem build/cmd/hlomem/hlomem] [--pb]
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hlomem", default=os.path.join(ROOT, "build/cmd/hlomem/hlomem"))
    parser.add_argument("--pb", action="store_true", help="read the .hlo.pb instead of the text")
    args = parser.parse_args()
    manifest = json.load(open(os.path.join(ROOT, "testdata/jax/MANIFEST.json")))
    fields = [("argument_bytes", "argument_size_in_bytes"), ("output_bytes", "output_size_in_bytes"),
              ("alias_bytes", "alias_size_in_bytes"), ("temp_bytes", "temp_size_in_bytes")]
    print(f"{'case':44} {'XLA total':>16} {'computed':>16} {'delta':>10}  memory_analysis")
    exact = stats_exact = close = 0
    cases = manifest["cases"]
    if args.pb:  # cases too large to keep a .hlo.pb have none
        cases = [c for c in cases if "after_optimizations_pb" in c["role_files"]]
    for case in cases:
        role = "after_optimizations_pb" if args.pb else "after_optimizations"
        path = os.path.join(ROOT, "testdata", case["directory"], case["role_files"][role])
        out = subprocess.run([args.hlomem, "report", "--format", "json", path],
                             capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{case['name']:44} hlomem failed: {out.stderr.strip()[:80]}")
            continue
        computed = json.loads(out.stdout)["modules"][0]["computed"]
        xla = case["xla_total_bytes"]
        delta = computed["total_bytes"] - xla
        ma = case["memory_analysis"]
        stats_ok = all(computed[ours] == ma[theirs] for ours, theirs in fields)
        exact += delta == 0
        stats_exact += stats_ok
        close += abs(delta) <= 0.01 * xla
        print(f"{case['name']:44} {xla:16d} {computed['total_bytes']:16d} {delta:10d}  "
              f"{'exact' if stats_ok else 'differs'}")
    n = len(cases)
    print(f"\n{exact}/{n} totals exact, {stats_exact}/{n} memory_analysis() exact, "
          f"{close}/{n} within 1% ({'HloProto' if args.pb else 'HLO text'} input)")
    return 0 if exact == n else 1


if __name__ == "__main__":
    sys.exit(main())
