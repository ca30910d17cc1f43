#!/usr/bin/env python3
"""A/B of parse_perftest binaries (Google Benchmark) built from two commits:
runs them in turn, round after round, and prints per benchmark the median
MB/s (CPU time) of each, the x_cat counter (parse wall time per read(2) of
the file: 1 = parsing at the page cache's bandwidth) and the ratio of rates.

Usage:
  tools/perf/bench_ab.py [--rounds 5] [--filter 'BM_Parse/'] \
      OLD=path/to/parse_perftest NEW=path/to/parse_perftest

Run both with the same environment (HLOMEM_PERF_FILE adds a generated
module, e.g. one from tools/perf/scale_module.py). Build the old commit in
a directory of its own (git archive OLD | tar -x -C DIR) with this
commit's tests/perf, so both list the same inputs.
"""
import argparse
import json
import statistics
import subprocess


def run(binary, flt, min_time):
    out = subprocess.run([binary, "--benchmark_filter=" + flt, "--benchmark_format=json",
                          "--benchmark_min_time=%g" % min_time],
                         check=True, capture_output=True, text=True).stdout
    return {b["name"]: b for b in json.loads(out)["benchmarks"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bins", nargs="+", help="NAME=PATH, the first is the baseline")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--filter", default="BM_Parse/")
    ap.add_argument("--min-time", type=float, default=0.3)
    args = ap.parse_args()
    bins = [b.split("=", 1) for b in args.bins]
    results = {name: [] for name, _ in bins}
    for _ in range(args.rounds):
        for name, path in bins:
            results[name].append(run(path, args.filter, args.min_time))
    first = bins[0][0]
    names = list(results[first][0].keys())
    header = "| benchmark | input |" + "".join(" %s MB/s | %s x_cat |" % (n, n) for n, _ in bins)
    header += "".join(" %s / %s |" % (n, first) for n, _ in bins[1:])
    print(header)
    print("|---|---|" + "---:|---:|" * len(bins) + "---:|" * (len(bins) - 1))
    for bench in names:
        rates, cats = {}, {}
        for name, _ in bins:
            runs = [r[bench] for r in results[name] if bench in r]
            rates[name] = statistics.median(b["bytes_per_second"] for b in runs) / 1e6
            cats[name] = statistics.median(b.get("x_cat", 0) for b in runs)
        label = results[first][0][bench].get("label", "")
        row = "| %s | %s |" % (bench, label)
        row += "".join(" %.0f | %.1f |" % (rates[n], cats[n]) for n, _ in bins)
        row += "".join(" %.3f |" % (rates[n] / rates[first]) for n, _ in bins[1:])
        print(row)


if __name__ == "__main__":
    main()
