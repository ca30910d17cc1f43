#!/usr/bin/env python3
"""A dump folder of many modules against one module of the same total bytes.

A real training script dumps hundreds of modules. This builds such a folder
from the real CPU dumps under testdata/ (each after-optimizations HLO file
copied under a new module id, cycling through them), and one module of the
same total size scaled from the largest of them (scale_module.py), then times
`hlomem report --format json -o /dev/null` on each, alternating, and prints
the medians of wall time and peak RSS and their ratio.

    tools/perf/many_modules.py [--modules 500] [--runs 5] [--hlomem BIN] [--work DIR]

Only the standard library and /usr/bin/time are used.
"""
import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NAME = re.compile(r"module_\d+\.(.+?)\.cpu_after_optimizations\.txt$")


def real_modules():
    paths = sorted(p for p in glob.glob(os.path.join(ROOT, "testdata", "**",
                                                     "*.cpu_after_optimizations.txt"),
                                        recursive=True)
                   if "/accel/" not in p and NAME.search(os.path.basename(p)))
    if not paths:
        sys.exit("no CPU dumps under testdata/")
    return paths


def build_folder(folder, count, sources):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    total = 0
    for k in range(count):
        source = sources[k % len(sources)]
        name = NAME.search(os.path.basename(source)).group(1)
        target = os.path.join(folder, "module_%04d.%s.cpu_after_optimizations.txt" % (k, name))
        shutil.copyfile(source, target)
        total += os.path.getsize(target)
    return total


def timed(command):
    """(wall seconds, peak RSS bytes, CPU seconds) of one run."""
    out = subprocess.run(["/usr/bin/time", "-f", "%e %M %U %S"] + command,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(command), out.stderr[-2000:]))
    wall, kib, user, system = out.stderr.strip().splitlines()[-1].split()
    return float(wall), int(kib) * 1024, float(user) + float(system)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modules", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--hlomem", default=os.path.join(ROOT, "build", "cmd", "hlomem", "hlomem"))
    parser.add_argument("--work", default="/tmp/hlomem-many-modules")
    args = parser.parse_args()

    sources = real_modules()
    folder = os.path.join(args.work, "dump")
    total = build_folder(folder, args.modules, sources)
    largest = max(sources, key=os.path.getsize)
    single = os.path.join(args.work, "single.txt")
    subprocess.run([sys.executable, os.path.join(HERE, "scale_module.py"), largest, single,
                    "--size", str(total)], check=True, stdout=subprocess.DEVNULL)
    print("folder: %d modules (%d real CPU dumps cycled), %.1f MB" %
          (args.modules, len(sources), total / 1e6))
    print("single: %s scaled to %.1f MB" % (os.path.relpath(largest, ROOT),
                                            os.path.getsize(single) / 1e6))
    report = [args.hlomem, "report", "--format", "json", "-o", "/dev/null"]
    runs = {"folder": [], "single": []}
    for _ in range(args.runs):
        runs["folder"].append(timed(report + [folder]))
        runs["single"].append(timed(report + [single]))
    medians = {}
    for key, values in runs.items():
        wall = statistics.median(v[0] for v in values)
        rss = statistics.median(v[1] for v in values)
        cpu = statistics.median(v[2] for v in values)
        medians[key] = (wall, rss, cpu)
        print("%-7s wall median %.2f s (min %.2f, max %.2f), CPU %.2f s, peak RSS median %.0f MB" %
              (key, wall, min(v[0] for v in values), max(v[0] for v in values), cpu, rss / 1e6))
    print("folder / single: wall %.2fx, CPU %.2fx, RSS %.2fx" %
          tuple(medians["folder"][k] / medians["single"][k] for k in (0, 2, 1)))


if __name__ == "__main__":
    main()
