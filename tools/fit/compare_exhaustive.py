#!/usr/bin/env python3
"""hlomem fit against an exhaustive search, one compile per value, side by side.

For each program and device: a wide fit finds where the limit is; then, over
a window of WIDTH values around it, fit (no cache) and the exhaustive search
(every value compiled, no cache) run one after the other in this process,
and one line says whether fit's answer is the exhaustive one, whether the
answer fits and the value above it does not, and what each cost.

  PYTHONPATH=... .venv-jax-tpu/bin/python tools/fit/compare_exhaustive.py \
      --device v5e-16gb --device v6e-32gb --program mlp_train --program cnn_train \
      --program public_programs.py:kh_gemma3_270m_train
A program is a name in programs.py, or FILE.py:NAME (a relative FILE is looked up
beside this script first), searched over its wide range (WIDE, or --wide LO:HI).
The interpreter must have the jax plugin of the devices (jax[tpu] or
jax[cuda12]) and, for public_programs.py, the packages of
requirements-public-*.txt; tools/fit/compare_exhaustive.sh runs both.
After each row, a line starting with '#' gives every verdict: fit's probes of the
window and the exhaustive search's compiles (value + fits, value - does not).
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WIDE = {"mlp_train": (256, 262144), "transformer_train": (1, 512), "cnn_train": (1, 4096),
        "attention_train": (1, 256),
        # public_programs.py: from batch 1 to past what an 80 GB card holds (at least 2x)
        "hf_gpt2_train": (1, 128), "hf_gpt2_medium_train": (1, 128),
        "hf_smollm2_360m_train": (1, 64), "kh_gemma3_270m_train": (1, 512),
        "kh_gpt2_base_train": (1, 256)}


def _build_ref(program):
    """'name' (programs.py) or 'FILE.py:name' -> (the FILE.py:name fit loads, name)."""
    path, _, name = program.rpartition(":")
    if not path:
        return os.path.join(HERE, "programs.py") + ":" + name, name
    if not os.path.isabs(path) and not os.path.exists(path) and os.path.exists(os.path.join(HERE, path)):
        path = os.path.join(HERE, path)
    return os.path.abspath(path) + ":" + name, name


def _verdicts(values):
    return " ".join(f"{v}{'+' if f else '-' if f is False else '?'}" for v, f in sorted(values.items()))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", action="append", required=True)
    parser.add_argument("--program", action="append", default=None)
    parser.add_argument("--width", type=int, default=24, help="values compiled by the exhaustive search")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--wide", default=None, help="LO:HI, the wide search's range (default: WIDE)")
    args = parser.parse_args()
    import hlomem
    from hlomem import _fit, _probe
    programs = args.program or ["mlp_train", "transformer_train", "cnn_train", "attention_train"]
    print("program                device        window            fit  exhaustive  agree  answer fits  "
          "next fails  compiles fit/exh  wall fit/exh (s)", flush=True)
    wrong = 0
    for device in args.device:
        for program in programs:
            build, program = _build_ref(program)
            bounds = tuple(int(x) for x in args.wide.split(":")) if args.wide else WIDE[program]
            wide = hlomem.fit(build, batch=bounds, device=device, jobs=args.jobs, progress=False)
            if wide.errors or wide.largest is None:
                print(f"{program:22} {device:12}  wide search {bounds[0]}:{bounds[1]}: "
                      f"{wide.errors[0].error if wide.errors else 'nothing fits'}", flush=True)
                wrong += 1
                continue
            lo = max(bounds[0], wide.largest - args.width // 2)
            hi = lo + args.width - 1
            start = time.monotonic()
            narrow = hlomem.fit(build, batch=(lo, hi), device=device, jobs=args.jobs, cache=False,
                                progress=False)
            fit_wall = time.monotonic() - start
            loaded = _fit._load_build(build)
            start = time.monotonic()
            verdicts = {}
            for value in range(lo, hi + 1):
                fn, fargs, kwargs = _fit._unpack_build(loaded(batch=value))
                r = _probe.compile_probe(fn, fargs, kwargs, device=device)
                if r["status"] == "error":
                    raise SystemExit(f"{program} {device} batch={value}: {r['error']}")
                verdicts[value] = r["fits"]
            exh_wall = time.monotonic() - start
            fitting = [v for v, f in verdicts.items() if f]
            exhaustive = max(fitting) if fitting else None
            answer = narrow.largest
            answer_fits = answer is not None and verdicts.get(answer) is True
            next_fails = answer is not None and (answer == hi or verdicts.get(answer + 1) is False)
            agree = answer == exhaustive
            wrong += not (agree and answer_fits and next_fails)
            compiles = sum(p.compiles for p in narrow.frontier)
            print(f"{program:22} {device:12} {lo:>7}:{hi:<7} {answer!s:>7}  {exhaustive!s:>10}  "
                  f"{'yes' if agree else 'NO':>5}  {'yes' if answer_fits else 'NO':>11}  "
                  f"{'yes' if next_fails else 'NO':>10}  {compiles:>7}/{len(verdicts):<8} "
                  f"{fit_wall:>7.1f}/{exh_wall:.1f}", flush=True)
            fit_probes = {p.value: p.fits for p in narrow.frontier[0].probes}
            check = (getattr(narrow, "breakdown", None) or {}).get("check") or {}
            extra = (f"   (+1 compile at {check['value']} for the breakdown's check, in fit's wall)"
                     if check.get("extra_compile") else "")
            print(f"#   fit: {_verdicts(fit_probes)}   exhaustive: {_verdicts(verdicts)}{extra}", flush=True)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
