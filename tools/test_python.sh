#!/usr/bin/env bash
# The Python package's tests against the installed wheel: builds the wheel
# (tools/build_wheel.sh), installs it into a fresh virtualenv with pytest and
# jax (CPU), and runs tests/python from outside the source tree, so that
# `import hlomem` can only find the installed package.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
wheel="$(tools/build_wheel.sh | tail -1)"
source tools/python.sh
version="$("$HLOMEM_PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
venv="$ROOT/build-wheel/test-venv-$version"
rm -rf "$venv"
"$HLOMEM_PYTHON" -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
# The pinned jax needs Python 3.12 or later; an older Python gets the newest
# jax it can run.
if "$venv/bin/python" -c "import sys; sys.exit(sys.version_info < (3, 12))"; then
  jax_requirements=(-r tools/requirements-jax-0.12.0.1.txt)
else
  jax_requirements=(jax)
fi
# Dask's distributed: fit's executor= is tested on a local cluster.
"$venv/bin/pip" install -q "$ROOT/$wheel" pytest "distributed==2026.8.0" "${jax_requirements[@]}"
echo "installed $wheel into $venv" >&2
run_dir="$(mktemp -d)"
trap 'rm -rf "$run_dir"' EXIT
cd "$run_dir"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$ROOT/tests/python" "$@"
