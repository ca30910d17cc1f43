"""Timing helpers shared by the perf scripts (standard library only).

Wall times are medians over runs with a warm page cache (one untimed run
first); peak RSS is the largest over runs, from /usr/bin/time -f %M.
"""
import argparse
import os
import statistics
import subprocess
import time

DEFAULT_HLOMEM = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "build", "cmd", "hlomem", "hlomem")


def run_measured(cmd):
    """(wall seconds, peak RSS bytes, CPU seconds) of one run of `cmd`, output discarded.

    The peak and CPU time come from /usr/bin/time: a child forked from this
    (possibly jaxlib-laden) interpreter would report the interpreter's pages
    too. Without /usr/bin/time they are 0.
    """
    have_time = os.path.exists("/usr/bin/time")
    timed = ["/usr/bin/time", "-f", "%M %U %S"] + cmd if have_time else cmd
    start = time.perf_counter()
    proc = subprocess.run(timed, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    err = proc.stderr.decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError("%s failed (exit %d): %s" % (" ".join(cmd), proc.returncode, err[-2000:]))
    if not have_time:
        return wall, 0, 0.0
    kib, user, system = err.strip().splitlines()[-1].split()
    return wall, int(kib) * 1024, float(user) + float(system)


def run_once(cmd):
    """(wall seconds, peak RSS bytes) of one run of `cmd`, output discarded."""
    wall, rss, _ = run_measured(cmd)
    return wall, rss


def alternate(commands, runs):
    """Runs each of `commands` (name -> argv) in turn, `runs` rounds after one
    untimed round, so drift in the machine's speed reaches all alike.
    Returns name -> {"wall", "rss", "cpu"}: medians over the rounds."""
    for cmd in commands.values():
        run_measured(cmd)
    results = {name: [] for name in commands}
    for _ in range(runs):
        for name, cmd in commands.items():
            results[name].append(run_measured(cmd))
    return {name: {"wall": statistics.median(r[0] for r in rs),
                   "rss": statistics.median(r[1] for r in rs),
                   "cpu": statistics.median(r[2] for r in rs)}
            for name, rs in results.items()}


def measure(cmd, runs):
    """(median wall seconds, max peak RSS bytes) over `runs` runs after a warm-up."""
    run_once(cmd)
    results = [run_once(cmd) for _ in range(runs)]
    return statistics.median(r[0] for r in results), max(r[1] for r in results)


def xla_parser():
    """jaxlib's binding of XLA's HLO text parser (hlo_module_from_text), or None."""
    try:
        from jax._src.lib import hlo  # jaxlib._hlo, as jax itself imports it
        return hlo.hlo_module_from_text
    except (ImportError, AttributeError):
        return None


def measure_xla(path, runs):
    """Median seconds XLA's parser takes on the file's text (reading excluded)."""
    parse = xla_parser()
    with open(path, encoding="utf-8") as f:
        text = f.read()
    parse(text)  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        module = parse(text)
        times.append(time.perf_counter() - start)
        del module
    return statistics.median(times)


def mb(nbytes):
    return nbytes / 1e6


def argument_parser(doc):
    """The options every perf script takes: FILE..., --runs, --hlomem."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--hlomem", default=DEFAULT_HLOMEM)
    return ap
