#!/usr/bin/env python3
"""Per-core parse rate of one or more hlomem binaries side by side, with
`cat` as the yardstick, in one run (A/B comparisons on a shared host).

Usage:
  tools/perf/parse_ab.py [--runs 7] [--bin NAME=PATH]... FILE...

For each file: `cat FILE > /dev/null`, then `hlomem parse --threads 1 FILE`
for every binary, the binaries taking turns run after run so that a change
in the host's load falls on all of them alike. Printed per file and binary:
the median wall seconds and CPU seconds (user + system, from the child's
rusage: less sensitive than wall time to other processes on the host), MB/s
per core on each, the ratio to cat's MB/s (wall) and, from the second
binary on, the A/B ratio of median CPU times to the first binary's.
--together adds a row for all the files in one run (as a directory is
loaded), which amortises the process start-up over the files.
"""
import argparse
import os
import statistics
import subprocess
import time

DEFAULT_HLOMEM = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "build", "cmd", "hlomem", "hlomem")


def run(cmd):
    """(wall seconds, CPU seconds) of one run of `cmd`, output discarded."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(cmd), err[-2000:]))
    return wall, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--bin", action="append", default=[],
                    help="NAME=PATH of an hlomem binary (repeatable; default: this build)")
    ap.add_argument("--together", action="store_true",
                    help="also one row for all the files in one run")
    args = ap.parse_args()
    bins = [tuple(b.split("=", 1)) for b in args.bin] or [("hlomem", DEFAULT_HLOMEM)]
    rows = [(os.path.basename(f), [f]) for f in args.files]
    if args.together and len(args.files) > 1:
        rows.append(("%d files in one run" % len(args.files), list(args.files)))
    print("| file | MB | cat MB/s | binary | parse s (wall) | CPU s | MB/s per core (wall) "
          "| MB/s per core (CPU) | cat / parse | CPU vs first |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for label, paths in rows:
        mb = sum(os.path.getsize(p) for p in paths) / 1e6
        cmds = [["cat"] + paths] + [[path, "parse", "--threads", "1"] + paths for _, path in bins]
        for cmd in cmds:
            run(cmd)  # warm the page cache and the binary
        times = [[] for _ in cmds]
        for _ in range(args.runs):
            for k, cmd in enumerate(cmds):
                times[k].append(run(cmd))
        med = [(statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
               for t in times]
        cat_rate = mb / med[0][0]
        for k, (name, _) in enumerate(bins, start=1):
            wall, cpu = med[k]
            print("| %s | %.1f | %.0f | %s | %.3f | %.3f | %.0f | %.0f | %.1fx | %s |" % (
                label, mb, cat_rate, name, wall, cpu, mb / wall, mb / cpu,
                cat_rate / (mb / wall), "%.3f" % (cpu / med[1][1]) if k > 1 else "1"))
        print("", end="", flush=True)


if __name__ == "__main__":
    main()
