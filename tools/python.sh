# Sourced by the Python scripts: HLOMEM_PYTHON is the interpreter to build
# and test with. Python 3.12 is preferred: its wheel uses the stable ABI
# (3.12 and later), and the pinned jax (tools/requirements-jax-0.12.0.1.txt)
# needs it. $PYTHON overrides.
find_python() {
  if [ -n "${PYTHON:-}" ]; then echo "$PYTHON"; return; fi
  local c
  for c in python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3.12 python3.13 \
           "$HOME"/.pyenv/versions/3.13*/bin/python3.13 python3; do
    # pyenv's shims exist for versions that are not selected: run it.
    if "$c" -c "import venv" >/dev/null 2>&1; then
      "$c" -c "import sys; print(sys.executable)"
      return
    fi
  done
  echo "error: no python3 found" >&2
  return 1
}
HLOMEM_PYTHON="$(find_python)"
