#!/usr/bin/env bash
# Regenerates testdata/trainers/<target>/<case>/: train steps of public training code from PyPI
# (transformers' Flax GPT-2 / Llama, keras-hub's GPT-2 / Gemma 3 with KERAS_BACKEND=jax;
# tools/programs/trainers.py), FSDP x tensor parallel on 4-chip deviceless TPU topologies, at
# the edge of each chip's HBM (E1000 CompileTimeHbmOom on the far side), and on 8-GPU H100 and
# A100 topologies (gpu_h100, gpu_a100).
#   tools/gen_trainer_testdata.sh                          # every case of trainers.CASES
#   tools/gen_trainer_testdata.sh --only kh_gpt2_base_l6_v6e_fits
#   tools/gen_trainer_testdata.sh --try hf_gpt2_medium_l6 --target tpu_v5e --batch 8 --seq 4608
#   tools/gen_trainer_testdata.sh --probe kh_gpt2_base_l6 --target tpu_v6e --batch 16 --seq 2048,4096
#   tools/gen_trainer_testdata.sh --try hf_smollm2_360m_l3 --target gpu_h100 --batch 16 --seq 2048 --mesh 4x1
#   tools/gen_trainer_testdata.sh --manifest-only
# Creates .venv-trainers-tpu (ignored by git) from PyPI: jax[tpu]==0.12.0.1 and the code bases,
# pinned by tools/requirements-trainers-tpu.txt, then keras-hub without its dependencies
# (tools/requirements-trainers-nodeps.txt: keras-hub 0.32.0 requires tensorflow-text, which
# only its preprocessing layers use). One compile at a time (each worker runs under nice -n 19);
# a GPT-2-medium-wide 6-block step takes ~5 minutes and ~2-5 GiB of RAM on 2 busy cores.
# PYTHON selects the interpreter used to create the venv (default: pyenv 3.12, else python3).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  for p in /root/.pyenv/versions/3.12.*/bin/python3.12 "$(command -v python3.12 || true)" python3; do
    if [ -n "$p" ] && command -v "$p" >/dev/null 2>&1; then PYTHON="$p"; break; fi
  done
fi
# The GPU targets (gpu_h100, gpu_a100) compile in .venv-trainers-cuda: jax[cuda12] as
# tools/requirements-jax-cuda.txt pins it, and the same code bases at the same pins. It is
# created only when the arguments name a GPU target or case (--needs-cuda).
for kind in tpu cuda; do
  venv="$ROOT/.venv-trainers-$kind"
  if [ "$kind" = cuda ] && ! "$ROOT/.venv-trainers-tpu/bin/python" \
      "$ROOT/tools/gen_trainer_testdata.py" --needs-cuda "$@"; then
    continue
  fi
  if ! KERAS_BACKEND=jax "$venv/bin/python" -c "import jax, keras_hub, transformers, sys; sys.exit(jax.__version__ != '0.12.0.1')" 2>/dev/null; then
    echo "creating $venv with $PYTHON" >&2
    rm -rf "$venv"
    "$PYTHON" -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip
    if [ "$kind" = cuda ]; then
      "$venv/bin/pip" install -q -r "$ROOT/tools/requirements-jax-cuda.txt"
      "$venv/bin/pip" install -q -r <(grep -vE '^(jax|jaxlib|libtpu)==' "$ROOT/tools/requirements-trainers-tpu.txt")
    else
      "$venv/bin/pip" install -q -r "$ROOT/tools/requirements-trainers-tpu.txt"
    fi
    "$venv/bin/pip" install -q --no-deps -r "$ROOT/tools/requirements-trainers-nodeps.txt"
  fi
done
exec "$ROOT/.venv-trainers-tpu/bin/python" "$ROOT/tools/gen_trainer_testdata.py" \
  --python "$ROOT/.venv-trainers-tpu/bin/python" \
  --python-cuda "$ROOT/.venv-trainers-cuda/bin/python" "$@"
