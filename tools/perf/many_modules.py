#!/usr/bin/env python3
"""A dump folder of many modules against one module of the same total bytes.

A real training script dumps hundreds of modules. This builds such a folder
from the real CPU dumps under testdata/ (each after-optimizations HLO file
copied under a new module id, cycling through them), and one module of the
same total size scaled from the largest of them (scale_module.py), then times
`hlomem report --format json -o /dev/null` on each, alternating, and prints
the medians of wall time, CPU time and peak RSS and their ratios.

    tools/perf/many_modules.py [--modules 500] [--runs 5] [--hlomem BIN] [--work DIR]

Only the standard library and /usr/bin/time are used.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

from perf_common import alternate

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
    medians = alternate({"folder": report + [folder], "single": report + [single]}, args.runs)
    for key, m in medians.items():
        print("%-7s wall median %.2f s, CPU %.2f s, peak RSS median %.0f MB" %
              (key, m["wall"], m["cpu"], m["rss"] / 1e6))
    print("folder / single: wall %.2fx, CPU %.2fx, RSS %.2fx" %
          tuple(medians["folder"][k] / medians["single"][k] for k in ("wall", "cpu", "rss")))

if __name__ == "__main__":
    main()
