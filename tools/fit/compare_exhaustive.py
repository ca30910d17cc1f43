#!/usr/bin/env python3
"""hlomem fit against an exhaustive search, one compile per value, side by side.

For each program and device: a wide fit finds where the limit is; then, over
a window of WIDTH values around it, fit (no cache) and the exhaustive search
(every value compiled, no cache) run one after the other in this process,
and one line says whether fit's answer is the exhaustive one, whether the
answer fits and the value above it does not, and what each cost.

  PYTHONPATH=... .venv-jax-tpu/bin/python tools/fit/compare_exhaustive.py \
      --device v5e-16gb --device v6e-32gb --program mlp_train --program cnn_train
The interpreter must have the jax plugin of the devices (jax[tpu] or
jax[cuda12]); tools/fit/compare_exhaustive.sh runs both.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WIDE = {"mlp_train": (256, 262144), "transformer_train": (1, 512), "cnn_train": (1, 4096),
        "attention_train": (1, 256)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", action="append", required=True)
    parser.add_argument("--program", action="append", default=None)
    parser.add_argument("--width", type=int, default=24, help="values compiled by the exhaustive search")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    import hlomem
    from hlomem import _fit, _probe
    programs = args.program or sorted(WIDE)
    ref = os.path.join(HERE, "programs.py")
    print("program            device        window            fit  exhaustive  agree  answer fits  "
          "next fails  compiles fit/exh  wall fit/exh (s)", flush=True)
    wrong = 0
    for device in args.device:
        for program in programs:
            build = f"{ref}:{program}"
            wide = hlomem.fit(build, batch=WIDE[program], device=device, jobs=args.jobs, progress=False)
            if wide.errors or wide.largest is None:
                print(f"{program:18} {device:12}  wide search: {wide.errors[0].error if wide.errors else 'nothing fits'}")
                continue
            lo = max(WIDE[program][0], wide.largest - args.width // 2)
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
            print(f"{program:18} {device:12} {lo:>7}:{hi:<7} {answer!s:>7}  {exhaustive!s:>10}  "
                  f"{'yes' if agree else 'NO':>5}  {'yes' if answer_fits else 'NO':>11}  "
                  f"{'yes' if next_fails else 'NO':>10}  {compiles:>7}/{len(verdicts):<8} "
                  f"{fit_wall:>7.1f}/{exh_wall:.1f}", flush=True)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
