#!/usr/bin/env python3
"""Checks XLA's own placement of one memory space against hlomem's live ranges.

For each case (testdata/accel/<target>/<case>) and colour, reads the offsets
and sizes XLA's -buffer-assignment.txt gives the values of that colour, and
the live range hlomem computes for each (`hlomem buffer-assignment
--live-ranges`), and counts the pairs of values that overlap both in time and
in memory. Zero means XLA's layout is valid under hlomem's live ranges: no
value lives too long in hlomem's model, and a different heap size comes from
the order of placement (or from a range hlomem has shorter than XLA's).
The pieces of a sliced prefetch sit inside the chunk of the array their
ConcatBitcast joins them into, one step before it starts; those pairs are not
counted.

    tools/accel_layout_check.py [--hlomem BIN] [--verbose] TARGET/CASE:COLOR ...
    tools/accel_layout_check.py tpu_v5e/det_fragmentation_neg:1 tpu_v4/scan_rnn:3
    tools/accel_layout_check.py testdata/trainers/tpu_v6e/kh_gpt2_base_l3_b8_s6816:0
"""
import argparse
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALLOCATION = re.compile(r"allocation (\d+): size (\d+)(?:, color (\d+))?(.*)")
VALUE = re.compile(r" value: <\d+ (\S+?)(\{[0-9,]*\})?(?: @\d+)?(?: \(phi\))?> "
                   r"\(size=(\d+),offset=(\d+)\)")
RANGE = re.compile(r"\s+(\S+?)(\{[0-9,]*\}):(\d+)-(\d+)$")


def placements(text, color):
    """value name -> (size, offset) of the values of `color`'s temp arena."""
    out, current = {}, None
    for line in text.splitlines():
        m = ALLOCATION.match(line)
        if m:
            # Only the arena is one address space; parameters and outputs sit at 0 of their own.
            current = int(m.group(3) or 0) if "preallocated-temp" in m.group(4) else None
            continue
        m = VALUE.match(line)
        if m and current == color:
            out[m.group(1) + (m.group(2) or "{}")] = (int(m.group(3)), int(m.group(4)))
    return out


def live_ranges(text):
    out, in_ranges = {}, False
    for line in text.splitlines():
        if "BufferLiveRange" in line:
            in_ranges = True
            continue
        m = RANGE.match(line) if in_ranges else None
        if m:
            out[m.group(1) + m.group(2)] = (int(m.group(3)), int(m.group(4)))
    return out


def base_name(value):
    return value.split("{")[0].rsplit(".", 1)[0]


def conflicts(layout, ranges):
    """Pairs of values overlapping in time and memory, slices in their concat aside."""
    found = []
    names = sorted(v for v in layout if v in ranges)
    for i, a in enumerate(names):
        size_a, at_a = layout[a]
        start_a, end_a = ranges[a]
        for b in names[i + 1:]:
            size_b, at_b = layout[b]
            start_b, end_b = ranges[b]
            if not (at_a < at_b + size_b and at_b < at_a + size_a):
                continue
            if not (start_a <= end_b and start_b <= end_a):
                continue
            if (size_a, at_a) == (size_b, at_b):
                continue  # one chunk, values of one buffer
            if ({base_name(a), base_name(b)} == {"slice", "custom-call"} and
                    (end_a == start_b or end_b == start_a)):
                continue  # a prefetched slice inside the array it is joined into
            found.append((a, b))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hlomem", default=os.path.join(ROOT, "build/cmd/hlomem/hlomem"))
    parser.add_argument("--verbose", action="store_true", help="list the conflicting pairs")
    parser.add_argument("cases", nargs="+", help="TARGET/CASE:COLOR")
    args = parser.parse_args()
    total = 0
    for spec in args.cases:
        case, _, color = spec.partition(":")
        directory = case if os.path.isdir(case) else os.path.join(ROOT, "testdata", "accel", case)
        hlo = glob.glob(os.path.join(directory, "*after_optimizations.txt"))
        assignment = glob.glob(os.path.join(directory, "*after_optimizations-buffer-assignment.txt"))
        if len(hlo) != 1 or len(assignment) != 1:
            sys.exit(f"{case}: expected one after-optimizations HLO and buffer assignment")
        ours = subprocess.run([args.hlomem, "buffer-assignment", "--live-ranges", hlo[0]],
                              capture_output=True, text=True, check=True).stdout
        with open(assignment[0], encoding="utf-8") as f:
            xla = placements(f.read(), int(color or 1))
        computed = placements(ours, int(color or 1))
        pairs = conflicts(xla, live_ranges(ours))
        total += len(pairs)
        heap = lambda layout: max((s + o for s, o in layout.values()), default=0)
        print(f"{case:45} colour {color or 1}: XLA {heap(xla):>11} B, hlomem {heap(computed):>11} B, "
              f"{len(pairs)} pairs overlapping under hlomem's live ranges")
        if args.verbose:
            for a, b in pairs:
                print(f"  {a} {xla[a]}  {b} {xla[b]}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
