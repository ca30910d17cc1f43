#!/usr/bin/env python3
"""Print the performance table of docs/performance.md: for each HLO text file, `cat`,
`hlomem parse` and `hlomem report --format json` side by side, and XLA's own
parser when jaxlib is importable.

Usage:
  .venv-jax-0.12.0.1/bin/python tools/perf/figures.py [--runs 5] \
      [--hlomem build/cmd/hlomem/hlomem] [--xla-max-mb 150] \
      [--together FILE... --] FILE...

--together adds one row for the files it names, loaded by one hlomem run
(as a directory of modules is); XLA's parser is not timed on it.

Columns: input size; `cat FILE > /dev/null` seconds; hlomem parse seconds,
MB/s and the ratio to cat, on all cores (a module of 8 MB or more is parsed in
parts) and on one (`--threads 1`: the per-core rate); hlomem report seconds
(parse, buffer assignment, detectors, JSON written to /dev/null) and its peak
RSS, also as a multiple of the input size; XLA's parser seconds (in-process,
text already in memory; skipped above --xla-max-mb, where it needs many GB)
and how many times slower than `hlomem parse --threads 1` it is (both on one
core). Times are medians of --runs runs with a warm page cache; RSS is the
largest ru_maxrss over the runs.
"""
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf_common  # noqa: E402


def main():
    ap = perf_common.argument_parser(__doc__)
    ap.add_argument("--xla-max-mb", type=float, default=150)
    ap.add_argument("--together", nargs="+", default=[])
    args = ap.parse_args()
    has_xla = perf_common.xla_parser() is not None
    print("%s, %d cores, median of %d runs\n" % (platform.processor() or platform.machine(),
                                                 os.cpu_count(), args.runs))
    print("| file | MB | cat s | parse s | parse MB/s | parse / cat | 1-thread parse s "
          "| MB/s per core | report s | report RSS | RSS / input | XLA parse s "
          "| XLA / hlomem 1-thread parse |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for path in args.files:
        print_row(os.path.basename(path), [path], args, has_xla)
    if args.together:
        print_row("%d files in one run" % len(args.together), args.together, args, False)


def print_row(label, paths, args, has_xla):
    size = sum(os.path.getsize(p) for p in paths)
    cat, _ = perf_common.measure(["cat"] + paths, args.runs)
    parse, _ = perf_common.measure([args.hlomem, "parse"] + paths, args.runs)
    parse1, _ = perf_common.measure([args.hlomem, "parse", "--threads", "1"] + paths, args.runs)
    report, rss = perf_common.measure(
        [args.hlomem, "report", "--format", "json", "-o", "/dev/null"] + paths, args.runs)
    xla_cells = ["n/a", "n/a"]
    if has_xla and perf_common.mb(size) <= args.xla_max_mb:
        xla = sum(perf_common.measure_xla(p, args.runs) for p in paths)
        xla_cells = ["%.2f" % xla, "%.1fx" % (xla / parse1)]
    print("| %s | %.0f | %.3f | %.3f | %.0f | %.1fx | %.3f | %.0f | %.2f | %.0f MB | %.2fx "
          "| %s |" % (
              label, perf_common.mb(size), cat, parse,
              perf_common.mb(size) / parse, parse / cat, parse1, perf_common.mb(size) / parse1,
              report, perf_common.mb(rss), rss / size, " | ".join(xla_cells)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
