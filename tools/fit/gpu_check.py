#!/usr/bin/env python3
"""hlomem fit's deviceless probes against the same probes compiled and run on a real GPU.

Run on a machine with one CUDA GPU, jax with its CUDA plugin, and the hlomem package:

  PYTHONPATH=<hlomem site> python3 tools/fit/gpu_check.py --out DIR [--deadline 420]

The program is tools/fit/programs.py:wide_mlp_train (f32, 8192 -> 32768 -> 32768 -> 8192,
6.4 GB of donated parameters), searched in batches of ROWS rows. Each step runs in a
process of its own, so that the deviceless compiles never open the GPU and each run starts
with a fresh allocator:
  1. card: the CUDA total of the card (cudaMemGetInfo) and its name.
  2. deviceless: hlomem.fit for the card's hlomem preset (--device, default h100-80gb),
     without opening the GPU.
  3. device: the probes near the limit compiled on the card itself (no run): XLA's total,
     its rematerialized instructions, and the verdict against the allocator's bytes_limit.
  4. run: the answer and the value above it, each run once: the allocator's
     peak_bytes_in_use and bytes_limit, or the out-of-memory error and the allocator's log.
Writes DIR/gpu_check.json after every step (the figures so far), prints a table at the
end, and leaves in DIR the deviceless search's chart (fit_deviceless.png), each run's
stderr (run_N_stderr.txt: the allocator's log) and the runs' XLA dumps (dumps.tar.gz).
Exit 0 when every comparison agrees, 1 when one does not, 2 when a step failed.
"""
import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = 256  # rows per batch unit: the search runs over batch = 256 .. 512 units
BOUNDS = (256, 512)
BUILD = os.path.abspath(__file__) + ":build"


def build(batch):
    """What hlomem.fit compiles: wide_mlp_train at batch x ROWS rows."""
    sys.path.insert(0, HERE)
    import programs
    return programs.wide_mlp_train(batch * ROWS)


def _write_json(path, data):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True, default=str)
    os.replace(tmp, path)


# ----------------------------------------------------------------- steps (own processes)


def step_card(out):
    card = {}
    try:
        import cupy
        free, total = cupy.cuda.runtime.memGetInfo()
        props = cupy.cuda.runtime.getDeviceProperties(0)
        card.update(cuda_total_bytes=int(total), cuda_free_bytes=int(free),
                    name=props["name"].decode(), source="cupy cudaMemGetInfo")
    except Exception as e:  # noqa: BLE001 - try torch next
        card["cupy_error"] = "%s: %s" % (type(e).__name__, e)
        try:
            import torch
            free, total = torch.cuda.mem_get_info()
            card.update(cuda_total_bytes=int(total), cuda_free_bytes=int(free),
                        name=torch.cuda.get_device_name(0), source="torch cudaMemGetInfo")
        except Exception as e2:  # noqa: BLE001
            card["torch_error"] = "%s: %s" % (type(e2).__name__, e2)
    try:
        card["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception as e:  # noqa: BLE001
        card["nvidia_smi"] = "unavailable: %s" % e
    _write_json(out, card)


def step_deviceless(out, device, jobs, plot_dir):
    import hlomem
    from hlomem import _probe
    result = {"versions": _probe._versions(), "target": _probe.resolve_device(device)}
    start = time.monotonic()
    r = hlomem.fit(BUILD, batch=BOUNDS, device=device, jobs=jobs, cache=False)
    point = r.frontier[0]
    result["fit"] = {
        "device": device, "largest": point.largest, "error": point.error,
        "compiles": point.compiles, "wall_seconds": round(time.monotonic() - start, 1),
        "usable_bytes": point.probes[0].usable_bytes if point.probes else None,
        "probes": [{"value": p.value, "fits": p.fits, "status": p.status, "error": p.error,
                    "total_bytes": p.total_bytes, "temp_bytes": p.temp_bytes,
                    "remat_count": p.remat_count, "compile_seconds": p.compile_seconds}
                   for p in point.probes]}
    try:
        r.plot(os.path.join(plot_dir, "fit_deviceless.png"))
    except hlomem.Error as e:  # no matplotlib: the figures matter, not the chart
        result["plot_error"] = str(e)
    _write_json(out, result)


def step_device(out, values, deadline):
    from hlomem import _fit, _probe
    loaded = _fit._load_build(BUILD)
    result = {"versions": _probe._versions(), "probes": []}
    for value in values:
        if time.monotonic() > deadline:
            result["skipped"] = [v for v in values if v not in {p["value"] for p in result["probes"]}]
            break
        fn, args, kwargs = _fit._unpack_build(loaded(batch=value))
        r = _probe.compile_probe(fn, args, kwargs, device=None)
        result["probes"].append({k: r.get(k) for k in (
            "status", "error", "fits", "total_bytes", "temp_bytes", "argument_bytes",
            "output_bytes", "alias_bytes", "usable_bytes", "usable_source", "remat_count",
            "compile_seconds", "flops", "device_kind")} | {"value": value})
        _write_json(out, result)
    _write_json(out, result)


def step_run(out, value):
    """Compile and run the step at `value` once on the GPU (XLA_FLAGS set by the caller)."""
    import jax
    import jax.numpy as jnp
    from hlomem._probe import count_remat
    fn, args, kwargs = build(value)
    dev = jax.devices()[0]
    res = {"value": value, "rows": value * ROWS, "device_kind": dev.device_kind}
    _write_json(out, res)
    compiled = jax.jit(fn, **kwargs).lower(*args).compile()
    ma = compiled.memory_analysis()
    res["total_bytes"] = int(ma.total_allocation_bytes) if ma is not None else None
    res["temp_bytes"] = int(ma.temp_size_in_bytes) if ma is not None else None
    res["remat_count"] = count_remat(compiled.as_text() or "")
    arrays = jax.tree_util.tree_map(lambda s: jnp.full(s.shape, 0.01, s.dtype), args)
    jax.block_until_ready(arrays)
    res["stats_before"] = dict(dev.memory_stats() or {})
    start = time.monotonic()
    try:
        jax.block_until_ready(compiled(*arrays))
        res["ran"] = True
    except Exception as e:  # noqa: BLE001 - the out-of-memory error is the figure
        res["ran"] = False
        res["error"] = "%s: %s" % (type(e).__name__, str(e).strip())
    res["run_seconds"] = round(time.monotonic() - start, 2)
    res["stats_after"] = dict(dev.memory_stats() or {})
    _write_json(out, res)


# ----------------------------------------------------------------- the driver


def _step(args, timeout, env=None, stderr_path=None):
    """Runs one step of this script in its own process; its exit status."""
    cmd = [sys.executable, os.path.abspath(__file__), "--step"] + [str(a) for a in args]
    err = open(stderr_path, "w") if stderr_path else None
    try:
        return subprocess.run(cmd, env=env, stderr=err, timeout=max(timeout, 1)).returncode
    except subprocess.TimeoutExpired:
        return "timeout after %ds" % timeout
    finally:
        if stderr_path:
            err.close()


def _load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _gb(n):
    return "-" if n is None else "%.3f GB" % (n / 1e9)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--device", default="h100-80gb", help="the hlomem GPU preset of this card")
    ap.add_argument("--deadline", type=float, default=420, help="seconds for the whole check")
    ap.add_argument("--jobs", type=int, default=max(1, min(8, (os.cpu_count() or 2) // 2)))
    ap.add_argument("--near", type=int, default=4, help="probes compiled on the card")
    ap.add_argument("--autotune-level", type=int, default=0,
                    help="xla_gpu_autotune_level of the compiles on the card (XLA's default 4 "
                         "autotunes every GEMM of these shapes for minutes; a deviceless compile "
                         "never autotunes)")
    ap.add_argument("--step", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.step:  # the "--step" form is this script calling itself
        name, rest = a.step[0], a.step[1:]
        if name == "card":
            step_card(rest[0])
        elif name == "deviceless":
            step_deviceless(rest[0], rest[1], int(rest[2]), rest[3])
        elif name == "device":
            step_device(rest[0], [int(v) for v in rest[1].split(",")], time.monotonic() + float(rest[2]))
        elif name == "run":
            step_run(rest[0], int(rest[1]))
        return 0
    if not a.out:
        ap.error("--out DIR is required")
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="gpu_check.")  # the steps' own files; OUT keeps the results
    t0 = time.monotonic()
    left = lambda: a.deadline - (time.monotonic() - t0)  # noqa: E731
    summary = {"program": "wide_mlp_train", "rows_per_unit": ROWS, "bounds": BOUNDS,
               "preset": a.device, "steps": {}}
    report = os.path.join(a.out, "gpu_check.json")

    def save(step, rc, path):
        summary["steps"][step] = {"rc": rc, "seconds": round(time.monotonic() - t0, 1)}
        summary[step] = _load(path)
        _write_json(report, summary)
        print("[%6.1fs] %s: rc=%s" % (time.monotonic() - t0, step, rc), flush=True)

    card_path = os.path.join(work, "card.json")
    rc = _step(["card", card_path], 60)
    save("card", rc, card_path)
    total = (summary["card"] or {}).get("cuda_total_bytes")
    if not total:
        print("error: no CUDA total for the card", file=sys.stderr)
        return 2
    # The deviceless compiles never open the GPU (hlomem sets jax_platforms=cpu for them).
    dl_path = os.path.join(work, "deviceless.json")
    rc = _step(["deviceless", dl_path, a.device, a.jobs, a.out], left() * 0.45)
    save("deviceless", rc, dl_path)
    dl = (summary["deviceless"] or {}).get("fit")
    if not dl or dl.get("largest") is None:
        print("error: the deviceless search gave no answer", file=sys.stderr)
        return 2
    answer = dl["largest"]
    probed = sorted({p["value"] for p in dl["probes"]}, key=lambda v: abs(v - answer))
    near = sorted(set(probed[:a.near]) | {answer, answer + 1})
    dev_path = os.path.join(work, "device.json")
    on_card = dict(os.environ, XLA_FLAGS=(os.environ.get("XLA_FLAGS", "")
                                          + " --xla_gpu_autotune_level=%d" % a.autotune_level).strip())
    summary["autotune_level"] = a.autotune_level
    rc = _step(["device", dev_path, ",".join(map(str, near)), max(left() - 100, 30)],
               max(left() - 80, 30), env=on_card)
    save("device", rc, dev_path)
    # The runs: a fresh process each, with XLA's dump and the allocator's log.
    dumps = os.path.join(work, "dumps")
    summary["run"] = []
    # The answer, the value above it, and the lowest near-limit probe where the card's verdict
    # differs from the deviceless one.
    verdicts = {p["value"]: p["fits"] for p in dl["probes"]}
    differ = [p["value"] for p in (summary["device"] or {}).get("probes", [])
              if p["value"] in verdicts and p["fits"] != verdicts[p["value"]]]
    for value in [answer, answer + 1] + sorted(set(differ) - {answer, answer + 1})[:1]:
        path = os.path.join(work, "run_%d.json" % value)
        env = dict(on_card, TF_CPP_MIN_LOG_LEVEL="0", XLA_FLAGS=(
            on_card["XLA_FLAGS"] + " --xla_dump_to=%s/run_%d --xla_dump_hlo_as_text"
            " --xla_dump_hlo_module_re=jit_step" % (dumps, value)).strip())
        err_path = os.path.join(a.out, "run_%d_stderr.txt" % value)
        rc = _step(["run", path, value], max(min(left(), 90), 20), env=env, stderr_path=err_path)
        summary["steps"]["run_%d" % value] = {"rc": rc, "seconds": round(time.monotonic() - t0, 1)}
        summary["run"].append(_load(path))
        _write_json(report, summary)
        print("[%6.1fs] run %d: rc=%s" % (time.monotonic() - t0, value, rc), flush=True)
    if os.path.isdir(dumps):
        with tarfile.open(os.path.join(a.out, "dumps.tar.gz"), "w:gz") as t:
            t.add(dumps, arcname="dumps")
    return _print_table(summary)


def _print_table(s):
    card, dl, dev = s["card"] or {}, (s["deviceless"] or {}), (s["device"] or {})
    print("\ncard: %s, CUDA total %s B (%s); nvidia-smi: %s" % (
        card.get("name"), format(card.get("cuda_total_bytes", 0), ","), card.get("source"),
        card.get("nvidia_smi")))
    print("versions: deviceless %s, on the card %s" % (dl.get("versions"), dev.get("versions")))
    mine = {p["value"]: p for p in (dl.get("fit") or {}).get("probes", [])}
    d = dl.get("fit")
    if d:
        print("deviceless fit for %s: largest batch %s (x%d rows), %d compiles, %.1f s, usable %s"
              % (d["device"], d["largest"], ROWS, d["compiles"], d["wall_seconds"], _gb(d["usable_bytes"])))
    print("\n%6s %8s | %-31s | %-31s | %s" % ("batch", "rows", "deviceless (%s)" % s.get("preset"),
                                           "compiled on the card", "same"))
    agree = True
    for p in dev.get("probes", []):
        q = mine.get(p["value"]) or {}
        same = (p.get("total_bytes") == q.get("total_bytes") and p.get("remat_count") == q.get("remat_count")
                and p.get("fits") == q.get("fits"))
        agree &= same
        print("%6d %8d | %13s remat %2s fits %-4s | %13s remat %2s fits %-4s | %s" % (
            p["value"], p["value"] * ROWS, _gb(q.get("total_bytes")), q.get("remat_count"),
            q.get("fits"), _gb(p.get("total_bytes")), p.get("remat_count"), p.get("fits"),
            "yes" if same else "NO (%s)" % (p.get("error") or "differs")))
    if dev.get("probes"):
        print("allocator bytes_limit: %s B" % format(dev["probes"][0].get("usable_bytes") or 0, ","))
    for r in s.get("run") or []:
        if not r:
            continue
        before, after = r.get("stats_before", {}), r.get("stats_after", {})
        peak = after.get("peak_bytes_in_use")
        print("run batch %d (%d rows): XLA total %s B, %s; peak_bytes_in_use %s B (peak - total = %s B), "
              "bytes_limit %s B, %.1f s" % (
                  r["value"], r["rows"], format(r.get("total_bytes") or 0, ","),
                  "ran" if r.get("ran") else "failed: " + (r.get("error") or "?").splitlines()[0][:200],
                  format(peak or 0, ","),
                  format(peak - r["total_bytes"], ",") if r.get("ran") and peak and r.get("total_bytes")
                  else "-",
                  format(after.get("bytes_limit") or before.get("bytes_limit") or 0, ","),
                  r.get("run_seconds") or 0))
    runs = [r for r in s.get("run") or [] if r]
    if len(runs) == 2:
        agree &= bool(runs[0].get("ran")) and not runs[1].get("ran")
    print("\nevery comparison agrees" if agree else "\nA COMPARISON DIFFERS")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
