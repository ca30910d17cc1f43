#!/usr/bin/env bash
# The GitHub Action's install step (action.yml), as a script that can be run
# and tested anywhere. hlomem is not on PyPI, and the action never asks PyPI
# for it: a package of that name there would not be this project.
#   INPUT_INSTALL  source (default): build and install hlomem from the
#                    action's own checkout, $GITHUB_ACTION_PATH (the
#                    repository the workflow's `uses:` names, at that ref)
#                  a wheel: a path (relative to the workspace) or a URL
#                    ending in .whl, e.g. one tools/build_wheel.sh made
#                  a source tree or a pip URL naming one (a path with a
#                    slash, git+https://...): built as `source` is
#                  none: use the hlomem already on PATH
#   INPUT_PYTHON   the python whose pip installs it (default: python3)
# Building needs the packages of `tools/setup.sh --wheel` (apt, through sudo
# when not root; already installed ones are skipped) and pip's index for
# the build's own requirements (scikit-build-core, nanobind).
# Writes `hlomem=PATH` (the command to run) to $GITHUB_OUTPUT. Exit 2 on
# bad input, 1 when the install failed.
set -euo pipefail
ACTION_PATH="${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}"
INSTALL="${INPUT_INSTALL-source}"
PYTHON="${INPUT_PYTHON:-python3}"
output="${GITHUB_OUTPUT:-/dev/null}"

fail() {
  echo "::error title=hlomem install::$1" >&2
  exit "${2:-1}"
}

build_packages() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "::notice title=hlomem install::no apt here: the build needs the packages" \
      "tools/setup.sh --wheel lists (CMake, a C++ compiler, Abseil, protobuf, CLI11," \
      "nlohmann-json)" >&2
    return
  fi
  echo "::group::the build's Debian/Ubuntu packages (tools/setup.sh --wheel)"
  bash "$ACTION_PATH/tools/setup.sh" --wheel
  echo "::endgroup::"
}

case "$INSTALL" in
  none | "")
    command -v hlomem >/dev/null 2>&1 \
      || fail "install: none uses the hlomem on PATH, and there is none" 2
    hlomem --version
    echo "hlomem=$(command -v hlomem)" >> "$output"
    exit 0
    ;;
  source)
    target="$ACTION_PATH"
    [ -f "$target/pyproject.toml" ] || fail "install: source needs the action's checkout, and $target has no pyproject.toml" 2
    build_packages
    ;;
  *.whl)
    target="$INSTALL"
    ;;
  */*)
    target="$INSTALL"
    build_packages
    ;;
  *)
    fail "install: '$INSTALL' would be looked up on PyPI, and hlomem is not published there (a package of that name is not this project). Use 'source' (the default: built from the action's own checkout), a wheel's path or URL, a git URL, or 'none' for the hlomem on PATH" 2
    ;;
esac

command -v "$PYTHON" >/dev/null 2>&1 || fail "python: '$PYTHON' is not a command" 2
# A system Python that pip may not install into (PEP 668) gets a virtualenv
# of its own.
if "$PYTHON" -c 'import os, sys, sysconfig
managed = os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))
sys.exit(0 if managed and sys.prefix == sys.base_prefix else 1)'; then
  venv="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/hlomem-venv"
  echo "::notice title=hlomem install::$PYTHON is managed by the system: installing into $venv" >&2
  "$PYTHON" -m venv "$venv" || fail "$PYTHON -m venv failed (Debian and Ubuntu: apt-get install python3-venv python3-dev)"
  PYTHON="$venv/bin/python"
fi

echo "::group::pip install $target"
"$PYTHON" -m pip install --quiet "$target" || fail "pip install $target failed (its log is above)"
echo "::endgroup::"
scripts="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')"
[ -x "$scripts/hlomem" ] || fail "pip installed no hlomem command into $scripts"
"$scripts/hlomem" --version
echo "hlomem=$scripts/hlomem" >> "$output"
