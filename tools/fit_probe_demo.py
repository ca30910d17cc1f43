#!/usr/bin/env python3
"""Figures of docs/fit-compile.md, made with hlomem._probe on a host without accelerators.

  .venv-jax-cuda/bin/python tools/fit_probe_demo.py remat      # XLA:GPU remat vs device memory
  .venv-jax-tpu/bin/python tools/fit_probe_demo.py tpu-oom     # E1000 parsed
  .venv-jax-tpu/bin/python tools/fit_probe_demo.py tpu-parallel [--jobs 2] [--batches 8,12] [--pin] [--layers 6] [--rounds 1]

(the venvs of tools/gen_accel_testdata.sh). hlomem is imported from the installed package,
or from python/ when HLOMEM_SITE names a folder holding an `hlomem` package with its _core.

remat: an f32 3-layer MLP train step (8192 -> 32768 -> 32768 -> 8192, parameters donated)
at batch 98304, compiled deviceless for the H100 preset, and for a card of 10x its memory.
XLA:GPU rematerializes against the allocator's limit (0.75 x the CUDA total) less the
inputs and outputs, times 95%, so the program rematerializes on the H100 and not on the
larger card.

tpu-parallel: the same compiles one after the other in one process, then one per process
side by side (ALLOW_MULTIPLE_LIBTPU_LOAD=1, set by the probe), with wall and CPU times.
"""
import argparse
import os
import subprocess
import sys
import time

if os.environ.get("HLOMEM_SITE"):
    sys.path.insert(0, os.environ["HLOMEM_SITE"])

H100_TOTAL = 85_018_542_080


def mlp_step(batch, d=8192, h=32768):
    import jax
    import jax.numpy as jnp

    def step(p, x, y):
        def loss(p):
            a = jax.nn.gelu(x @ p["w1"])
            b = jax.nn.gelu(a @ p["w2"])
            return jnp.mean((b @ p["w3"] - y) ** 2)
        l, g = jax.value_and_grad(loss)(p)
        return jax.tree.map(lambda w, dw: w - 0.1 * dw, p, g), l

    def s(shape):
        return jax.ShapeDtypeStruct(shape, jnp.float32)
    params = {"w1": s((d, h)), "w2": s((h, h)), "w3": s((h, d))}
    return step, (params, s((batch, d)), s((batch, d))), {"donate_argnums": (0,)}


def transformer_step(batch, layers=6, d=1024, f=4096, heads=16, seq=1024):
    """A bf16 transformer train step (unrolled layers): a compile of tens of seconds."""
    import jax
    import jax.numpy as jnp

    def s(shape):
        return jax.ShapeDtypeStruct(shape, jnp.bfloat16)
    params = [{"wq": s((d, d)), "wk": s((d, d)), "wv": s((d, d)), "wo": s((d, d)),
               "w1": s((d, f)), "w2": s((f, d))} for _ in range(layers)]

    def fwd(params, x):
        for p in params:
            b, t, _ = x.shape
            q = (x @ p["wq"]).reshape(b, t, heads, d // heads)
            k = (x @ p["wk"]).reshape(b, t, heads, d // heads)
            v = (x @ p["wv"]).reshape(b, t, heads, d // heads)
            a = jax.nn.softmax(jnp.einsum("bshd,bthd->bhst", q, k).astype(jnp.float32) / 8,
                               axis=-1).astype(x.dtype)
            x = x + jnp.einsum("bhst,bthd->bshd", a, v).reshape(b, t, d) @ p["wo"]
            x = x + jax.nn.gelu(x @ p["w1"]) @ p["w2"]
        return x

    def step(params, x):
        l, g = jax.value_and_grad(lambda p: jnp.mean(fwd(p, x).astype(jnp.float32) ** 2))(params)
        return jax.tree.map(lambda w, dw: w - 0.01 * dw, params, g), l
    return step, (params, s((batch, seq, d))), {"donate_argnums": (0,)}


def remat():
    from hlomem._probe import compile_probe
    fn, args, kw = mlp_step(98304)
    print("MLP 8192->32768->32768->8192 f32 train step, batch 98304, on h100-80gb "
          "(allocator limit 0.75 x %s = %s B)" % (format(H100_TOTAL, ","),
                                                   format(int(H100_TOTAL * 0.75), ",")))
    print("%-44s %16s %16s %6s %9s %8s" % ("CUDA total (remat base: 75% of it)",
                                           "total B", "temp B", "remat", "TFLOP", "compile"))
    for label, mem in (("85,018,542,080 (the card's)", H100_TOTAL),
                       ("850,185,420,800 (10x)", 10 * H100_TOTAL)):
        r = compile_probe(fn, args, kw, "h100-80gb", device_memory_size=mem,
                          usable_bytes=int(H100_TOTAL * 0.75))
        if r["status"] != "ok":
            print(label, r["status"], r["error"])
            continue
        print("%-44s %16s %16s %6d %9.1f %7.1fs  fits %s" % (
            label, format(r["total_bytes"], ","), format(r["temp_bytes"], ","),
            r["remat_count"], (r["flops"] or 0) / 1e12, r["compile_seconds"], r["fits"]))


def tpu_oom():
    from hlomem._probe import compile_probe
    for batch in (8, 128):
        fn, args, kw = transformer_step(batch, layers=2)
        r = compile_probe(fn, args, kw, "tpu-v5e:2x2")
        print("batch %d: status %s fits %s total %s oom %s (%.1fs)" % (
            batch, r["status"], r["fits"], r["total_bytes"], r["oom"], r["compile_seconds"]))


def _child(batches, core=None, layers=6):
    if core is not None:
        os.sched_setaffinity(0, {core})
    from hlomem._probe import compile_probe
    for b in batches:
        fn, args, kw = transformer_step(b, layers=layers)
        r = compile_probe(fn, args, kw, "tpu-v5e:2x2")
        print("  pid %d batch %d: %s, compile %.1fs" % (os.getpid(), b, r["status"],
                                                        r["compile_seconds"]), flush=True)


def _timed(cmds):
    t0 = time.time()
    r0 = os.times()
    procs = [subprocess.Popen(c) for c in cmds]
    rc = [p.wait() for p in procs]
    r1 = os.times()
    wall = time.time() - t0
    cpu = (r1.children_user - r0.children_user) + (r1.children_system - r0.children_system)
    return wall, cpu, rc


def tpu_parallel(batches, jobs, pin, layers, rounds):
    for i in range(rounds):
        print("round %d, load average %s" % (i + 1, os.getloadavg()))
        _tpu_parallel(batches, jobs, pin, layers)


def _tpu_parallel(batches, jobs, pin, layers):
    me = [sys.executable, os.path.abspath(__file__), "child"]
    extra = ["--layers", str(layers)]
    pin_args = (lambda i: extra + ["--core", str(i)]) if pin else (lambda i: extra)
    print("sequential: one process compiles batches %s%s" % (batches, ", on core 0" if pin else ""))
    w1, c1, rc1 = _timed([me + [",".join(map(str, batches))] + pin_args(0)])
    if any(rc1):
        sys.exit("the sequential run failed: %s" % rc1)
    print("  wall %.1fs, CPU %.1fs" % (w1, c1))
    print("parallel: %d processes side by side%s" % (jobs, ", one core each" if pin else ""))
    groups = [batches[i::jobs] for i in range(jobs)]
    w2, c2, rc = _timed([me + [",".join(map(str, g))] + pin_args(i)
                         for i, g in enumerate(groups) if g])
    print("  wall %.1fs, CPU %.1fs, exit codes %s" % (w2, c2, rc))
    if any(rc):
        sys.exit("a parallel run failed: %s" % rc)
    print("speed-up %.2fx (load average now %s)" % (w1 / w2, os.getloadavg()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["remat", "tpu-oom", "tpu-parallel", "child"])
    ap.add_argument("arg", nargs="?", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--batches", default="8,12")
    ap.add_argument("--pin", action="store_true", help="one CPU core per process")
    ap.add_argument("--core", type=int, default=None)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args()
    if a.what == "remat":
        remat()
    elif a.what == "tpu-oom":
        tpu_oom()
    elif a.what == "tpu-parallel":
        tpu_parallel([int(b) for b in a.batches.split(",")], a.jobs, a.pin, a.layers,
                     a.rounds)
    else:
        _child([int(b) for b in a.arg.split(",")], a.core, a.layers)


if __name__ == "__main__":
    main()
