#!/usr/bin/env bash
# Builds hlomem and runs every test.
#   tools/test.sh [BUILD_DIR]          RelWithDebInfo build (default: build)
#   HLOMEM_SANITIZE=1 tools/test.sh D  the same suite under ASan + UBSan
# The unsanitized run also builds the Python wheel and runs its tests in a
# fresh virtualenv (tools/test_python.sh; HLOMEM_PYTHON_TESTS=0 skips them).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
flags=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [ "${HLOMEM_SANITIZE:-0}" = 1 ]; then
  flags+=(-DHLOMEM_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug)
fi
cmake -S . -B "$build_dir" "${flags[@]}" > /dev/null
cmake --build "$build_dir" -j "$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
if [ "${HLOMEM_SANITIZE:-0}" != 1 ] && [ "${HLOMEM_PYTHON_TESTS:-1}" = 1 ]; then
  tools/test_python.sh
fi
