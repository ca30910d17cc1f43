#!/usr/bin/env python3
"""Compile a real JAX program scaled up (N unrolled transformer layers) and keep
XLA's dump of it: a large, realistic after-optimizations module with XLA's own
buffer assignment next to it.

Usage (with the ground-truth virtualenv, see tools/README.md):
  .venv-jax-0.12.0.1/bin/python tools/perf/gen_jax_module.py OUT_DIR --layers 48

The program is the Adam train step of tools/programs/big.py
(big_unrolled_transformer_train) with --layers pre-LN blocks instead of 22. OUT_DIR receives the module's
*.cpu_after_optimizations.txt and its -buffer-assignment*.txt / -live-range.txt files,
so `hlomem report OUT_DIR` compares its numbers with XLA's. 48 layers give about
50 MB of text; compile time grows roughly linearly (about a minute per 50 MB here).
Nothing is allocated: inputs are ShapeDtypeStructs. Big outputs belong under /tmp
or build-*/, never in testdata/.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(TOOLS)
KEEP = re.compile(r"cpu_after_optimizations(\.txt|-buffer-assignment\.txt|"
                  r"-buffer-assignment-values\.txt|-live-range\.txt)$")


def compile_program(layers):
    """Runs in the worker process: XLA_FLAGS already point at the dump dir."""
    sys.path.insert(0, TOOLS)
    import jax
    import programs.big as big
    jax.config.update("jax_hlo_source_file_canonicalization_regex",
                      "^" + re.escape(REPO + os.sep))
    big.LAYERS = layers  # the builder reads it when called
    prog = big.big_unrolled_transformer_train()
    jax.jit(prog.fn, **prog.jit_kwargs).lower(*prog.args).compile()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--layers", type=int, default=48)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        compile_program(args.layers)
        return

    dump = tempfile.mkdtemp(prefix="hlomem-gen-")
    try:
        flags = ["--xla_dump_to=" + dump, "--xla_dump_hlo_as_text",
                 "--xla_dump_buffer_assignment_analysis"]
        env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=" ".join(flags),
                   TF_CPP_MIN_LOG_LEVEL="1")
        cmd = [sys.executable, os.path.abspath(__file__), dump, "--worker",
               "--layers", str(args.layers)]
        subprocess.run(cmd, env=env, check=True)
        os.makedirs(args.out_dir, exist_ok=True)
        # The jitted function's module is the largest after-optimizations text.
        texts = glob.glob(os.path.join(dump, "*.cpu_after_optimizations.txt"))
        main_text = max(texts, key=os.path.getsize)
        prefix = os.path.basename(main_text)[:-len("cpu_after_optimizations.txt")]
        for name in sorted(os.listdir(dump)):
            if name.startswith(prefix) and KEEP.search(name):
                shutil.copy(os.path.join(dump, name), args.out_dir)
        print("%s: %.1f MB" % (os.path.join(args.out_dir, os.path.basename(main_text)),
                               os.path.getsize(main_text) / 1e6))
    finally:
        shutil.rmtree(dump, ignore_errors=True)


if __name__ == "__main__":
    main()
