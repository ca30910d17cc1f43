#!/usr/bin/env bash
# hlomem fit against an exhaustive search on two TPU generations and two GPU
# targets (tools/fit/compare_exhaustive.py), with the virtualenvs that
# tools/gen_accel_testdata.sh makes (.venv-jax-tpu, .venv-jax-cuda) and the
# hlomem package on PYTHONPATH (a wheel installed there works too).
#   tools/fit/compare_exhaustive.sh [--width N] [--program P ...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
status=0
"$ROOT/.venv-jax-tpu/bin/python" "$ROOT/tools/fit/compare_exhaustive.py" \
  --device v5e-16gb --device v6e-32gb "$@" || status=1
"$ROOT/.venv-jax-cuda/bin/python" "$ROOT/tools/fit/compare_exhaustive.py" \
  --device h100-80gb --device a100-80gb "$@" | tail -n +2 || status=1
exit $status
