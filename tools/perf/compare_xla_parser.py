#!/usr/bin/env python3
"""Time XLA's own HLO text parser against `hlomem parse` on the same files.

Usage (needs jaxlib, e.g. the ground-truth virtualenv):
  .venv-jax-0.12.0.1/bin/python tools/perf/compare_xla_parser.py [--runs 5] \
      [--hlomem build/cmd/hlomem/hlomem] FILE...

XLA's side is jaxlib's binding of XLA's parser (jax._src.lib.hlo, i.e.
jaxlib._hlo.hlo_module_from_text: HLO text -> HloModule), timed in-process on
the text already in memory. hlomem's side is the whole `hlomem parse FILE`
process: start-up, mapping the file, parsing and verifying. Both are medians
of --runs runs after a warm-up run. The last column is XLA's time divided by
hlomem's.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf_common  # noqa: E402


def main():
    ap = perf_common.argument_parser(__doc__)
    args = ap.parse_args()
    if perf_common.xla_parser() is None:
        sys.exit("jaxlib with XLA's HLO parser binding is not importable; run with "
                 ".venv-jax-0.12.0.1/bin/python (see tools/README.md)")
    print("| file | MB | XLA parser s | XLA MB/s | hlomem parse s | hlomem MB/s | hlomem vs XLA |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    total_xla = total_hlomem = 0.0
    for path in args.files:
        size = os.path.getsize(path)
        xla = perf_common.measure_xla(path, args.runs)
        hlomem, _ = perf_common.measure([args.hlomem, "parse", path], args.runs)
        total_xla += xla
        total_hlomem += hlomem
        print("| %s | %.1f | %.3f | %.0f | %.3f | %.0f | %.1fx |" % (
            os.path.basename(path), perf_common.mb(size), xla, perf_common.mb(size) / xla,
            hlomem, perf_common.mb(size) / hlomem, xla / hlomem))
        sys.stdout.flush()
    print("\nall files: XLA %.3f s, hlomem %.3f s: hlomem is %.1fx faster" %
          (total_xla, total_hlomem, total_xla / total_hlomem))


if __name__ == "__main__":
    main()
