#!/usr/bin/env bash
# hlomem fit against an exhaustive search on two TPU generations and two GPU
# targets (tools/fit/compare_exhaustive.py), with the hlomem package on
# PYTHONPATH (a wheel installed there works too).
#   tools/fit/compare_exhaustive.sh [--width N] [--program P ...]
#   tools/fit/compare_exhaustive.sh --public [--width N] [--program public_programs.py:NAME ...]
# Without --public: the virtualenvs that tools/gen_accel_testdata.sh makes
# (.venv-jax-tpu, .venv-jax-cuda) and the project's own programs.py.
# With --public: .venv-fit-public-tpu and .venv-fit-public-cuda, made here when
# missing from tools/fit/requirements-public-*.txt (the pinned jax plus
# transformers, flax, optax, keras, keras-hub), and by default every train step
# of tools/fit/public_programs.py.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="${PYTHON:-python3.12}"
tpu="$ROOT/.venv-jax-tpu" cuda="$ROOT/.venv-jax-cuda"
if [[ "${1:-}" == "--public" ]]; then
  shift
  tpu="$ROOT/.venv-fit-public-tpu" cuda="$ROOT/.venv-fit-public-cuda"
  for kind in tpu cuda; do
    venv="$ROOT/.venv-fit-public-$kind"
    if [[ ! -x "$venv/bin/python" ]]; then
      "$PY" -m venv "$venv"
      "$venv/bin/pip" install -q -r "$ROOT/tools/fit/requirements-public-$kind.txt"
      "$venv/bin/pip" install -q --no-deps -r "$ROOT/tools/fit/requirements-public-nodeps.txt"
    fi
  done
  if [[ " $* " != *" --program "* ]]; then
    for p in hf_gpt2_train kh_gemma3_270m_train hf_gpt2_medium_train kh_gpt2_base_train \
             hf_smollm2_360m_train; do
      set -- "$@" --program "public_programs.py:$p"
    done
  fi
fi
export JAX_PLATFORMS=cpu
status=0
"$tpu/bin/python" "$ROOT/tools/fit/compare_exhaustive.py" \
  --device v5e-16gb --device v6e-32gb "$@" || status=1
"$cuda/bin/python" "$ROOT/tools/fit/compare_exhaustive.py" \
  --device h100-80gb --device a100-80gb "$@" | tail -n +2 || status=1
exit $status
