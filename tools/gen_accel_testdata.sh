#!/usr/bin/env bash
# Regenerates testdata/accel/<target>/<case>/ by compiling tools/programs/ for TPU and GPU
# targets on a host without any accelerator (deviceless AOT compile, JAX_PLATFORMS=cpu).
#   tools/gen_accel_testdata.sh                                   # all targets, all cases
#   tools/gen_accel_testdata.sh --target tpu_v5e --only mlp_grad  # one case on one target
#   tools/gen_accel_testdata.sh --target gpu_h100 --only oom_ --regex
#   tools/gen_accel_testdata.sh --bisect oom_mlp_adam --target tpu_v5e --lo 16384 --hi 65536
#   tools/gen_accel_testdata.sh --manifest-only
# Creates two virtualenvs (ignored by git) from PyPI, pinned by tools/requirements-jax-*.txt:
#   .venv-jax-tpu   jax[tpu]==0.12.0.1 (libtpu)            targets tpu_v4 tpu_v5e tpu_v5p tpu_v6e
#   .venv-jax-cuda  jax[cuda12]==0.12.0.1 (CUDA plugin)    targets gpu_h100 gpu_a100
# libtpu allows one process at a time: do not run two TPU generations (or bisections) at once.
# PYTHON selects the interpreter used to create the venvs (default: pyenv 3.12, else python3).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  for p in /root/.pyenv/versions/3.12.*/bin/python3.12 "$(command -v python3.12 || true)" python3; do
    if [ -n "$p" ] && command -v "$p" >/dev/null 2>&1; then PYTHON="$p"; break; fi
  done
fi
for kind in tpu cuda; do
  venv="$ROOT/.venv-jax-$kind"
  want="$ROOT/tools/requirements-jax-$kind.txt"
  if ! "$venv/bin/python" -c "import jax, sys; sys.exit(jax.__version__ != '0.12.0.1')" 2>/dev/null; then
    echo "creating $venv with $PYTHON" >&2
    rm -rf "$venv"
    "$PYTHON" -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip
    "$venv/bin/pip" install -q -r "$want"
  fi
done
exec "$ROOT/.venv-jax-tpu/bin/python" "$ROOT/tools/gen_accel_testdata.py" \
  --python-tpu "$ROOT/.venv-jax-tpu/bin/python" \
  --python-cuda "$ROOT/.venv-jax-cuda/bin/python" "$@"
