#!/usr/bin/env bash
# Regenerates testdata/jax/ (all cases, or --only CASE[,CASE...]) from tools/programs/.
#   tools/gen_testdata.sh                      # everything (about 2-3 minutes on 2 cores)
#   tools/gen_testdata.sh --only mlp_grad      # one case (MANIFEST.json is rebuilt from all dirs)
#   tools/gen_testdata.sh --only det_ --regex  # cases matching a regex
#   tools/gen_testdata.sh --list
# Creates two virtualenvs (ignored by git) with pinned jax/jaxlib from PyPI:
#   .venv-jax-0.7.0     seed cases (reproduces jax-ml/jax#30015 totals exactly)
#   .venv-jax-0.12.0.1  everything else (newest jax at the time of writing)
# PYTHON selects the interpreter used to create them (default: pyenv 3.12, else python3).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  for p in /root/.pyenv/versions/3.12.*/bin/python3.12 "$(command -v python3.12 || true)" python3; do
    if [ -n "$p" ] && command -v "$p" >/dev/null 2>&1; then PYTHON="$p"; break; fi
  done
fi
for v in 0.7.0 0.12.0.1; do
  venv="$ROOT/.venv-jax-$v"
  if ! "$venv/bin/python" -c "import jax, jaxlib, sys; sys.exit(jax.__version__ != '$v')" 2>/dev/null; then
    echo "creating $venv with $PYTHON" >&2
    rm -rf "$venv"
    "$PYTHON" -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip
    "$venv/bin/pip" install -q -r "$ROOT/tools/requirements-jax-$v.txt"
  fi
done
exec "$ROOT/.venv-jax-0.12.0.1/bin/python" "$ROOT/tools/gen_testdata.py" \
  --python-seed "$ROOT/.venv-jax-0.7.0/bin/python" \
  --python-suite "$ROOT/.venv-jax-0.12.0.1/bin/python" "$@"
