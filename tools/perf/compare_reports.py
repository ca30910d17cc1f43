#!/usr/bin/env python3
"""Compare two hlomem binaries' JSON reports, byte for byte, over many inputs.

Usage:
  compare_reports.py --before OLD_BIN --after NEW_BIN [--jobs N] [--format F] [--full] PATH...

Each PATH is a file or a directory. A directory is walked: every *.txt,
*.hlo and *.pb file under it is one input, and so is every directory that
holds such files (hlomem reads it as a dump). Each input is run through
`hlomem report --format json --threads 1 -o FILE` (or --format F, with
--full) with both binaries; the
two exit codes and the two output files must be identical (inputs that are
not HLO fail alike in both). Prints one line per difference and a summary;
exits 1 when anything differs.

Only the standard library is used.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile

SUFFIXES = (".txt", ".hlo", ".pb")


def inputs_of(paths):
    found = []
    for path in paths:
        if os.path.isfile(path):
            found.append(path)
            continue
        for root, dirs, files in os.walk(path):
            dirs.sort()
            hlo = sorted(f for f in files if f.endswith(SUFFIXES))
            if hlo:
                found.append(root)
            found.extend(os.path.join(root, f) for f in hlo)
    return found


def run(binary, path, out, extra):
    proc = subprocess.run(
        [binary, "report", "--threads", "1", "--no-color", "-o", out, *extra, path],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=3600)
    data = b""
    if os.path.exists(out):
        with open(out, "rb") as f:
            data = f.read()
        os.unlink(out)
    return proc.returncode, data


def compare(before, after, path, scratch, extra):
    base = os.path.join(scratch, str(abs(hash(path))))
    rc_a, out_a = run(before, path, base + ".before", extra)
    rc_b, out_b = run(after, path, base + ".after", extra)
    if rc_a != rc_b:
        return path, rc_a, f"exit {rc_a} before, {rc_b} after"
    if out_a != out_b:
        return path, rc_a, f"reports differ ({len(out_a)} vs {len(out_b)} bytes)"
    return path, rc_a, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--format", default="json")
    parser.add_argument("--full", action="store_true", help="every buffer and step")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    paths = inputs_of(args.paths)
    extra = ["--format", args.format] + (["--full"] if args.full else [])
    differences = 0
    reported = 0
    with tempfile.TemporaryDirectory() as scratch, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for path, rc, problem in pool.map(lambda p: compare(args.before, args.after, p, scratch, extra),
                                          paths):
            if problem:
                differences += 1
                print(f"DIFF {path}: {problem}", flush=True)
            elif rc == 0:
                reported += 1
    print(f"{len(paths)} inputs compared ({reported} reported, {len(paths) - reported} "
          f"refused alike), {differences} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
