#!/usr/bin/env python3
"""Random search for a program whose XLA temp arena is fragmented (used to pick the
widths/lifetimes of det_fragmentation_pos in programs/detectors.py).

  .venv-jax-0.12.0.1/bin/python tools/frag_search.py 100 160

For each seed it builds 20 sorted matmul temporaries f32[4096, w] (w random multiple of
64 up to 4096) each consumed 1..8 steps later, compiles in a subprocess with a dump, and
prints tools/frag_check.py's ratio (temp arena size / max live temp bytes).
"""
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def params(seed, n=20):
    rng = random.Random(seed)
    widths = [rng.randint(1, 64) * 64 for _ in range(n)]
    deaths = [i + rng.randint(1, 8) for i in range(n)]
    return widths, deaths


def compile_one(seed):
    import jax
    import jax.numpy as jnp
    widths, deaths = params(seed)

    def frag(x, ws):
        acc = jnp.zeros((x.shape[0],), x.dtype)
        live = {}
        for i, w in enumerate(ws):
            live[i] = jnp.sort((x + acc[:, None]) @ w, axis=0)
            for j in [j for j in live if deaths[j] == i]:
                acc = acc + jnp.sum(live.pop(j), axis=1)
        for j in sorted(live):
            acc = acc + jnp.sum(live.pop(j), axis=1)
        return acc
    args = (jax.ShapeDtypeStruct((4096, 1024), jnp.float32),
            [jax.ShapeDtypeStruct((1024, w), jnp.float32) for w in widths])
    jax.jit(frag).lower(*args).compile()


def main():
    if sys.argv[1] == "--one":
        compile_one(int(sys.argv[2]))
        return
    lo, hi = int(sys.argv[1]), int(sys.argv[2])
    for seed in range(lo, hi + 1):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, JAX_PLATFORMS="cpu",
                       XLA_FLAGS="--xla_dump_to=%s --xla_dump_hlo_as_text "
                                 "--xla_dump_buffer_assignment_analysis" % d)
            subprocess.run([sys.executable, __file__, "--one", str(seed)], env=env, check=True,
                           capture_output=True)
            out = subprocess.run([sys.executable, os.path.join(HERE, "frag_check.py"), d],
                                 capture_output=True, text=True).stdout.strip().splitlines()
            w, dd = params(seed)
            print(seed, out[-1] if out else "?", json.dumps({"widths": w, "deaths": dd}), flush=True)


if __name__ == "__main__":
    main()
