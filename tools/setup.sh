#!/usr/bin/env bash
# Installs everything hlomem needs to build and test on Debian 12 (bookworm),
# with apt (through sudo when not root).
#   tools/setup.sh          the compilers, libraries and test frameworks
#   tools/setup.sh --wheel  only what `pip install .` builds with (the
#                           GitHub Action's install step; these packages have
#                           the same names on Ubuntu 24.04, ubuntu-latest)
# Safe to re-run: apt skips what is already installed.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
# libclang-rt-14-dev (libFuzzer, clang's sanitizer runtimes) is only
# recommended by clang, and recommends are not installed here.
PACKAGES=(
  cmake ninja-build g++ clang libclang-rt-14-dev pkg-config zlib1g-dev
  libabsl-dev libprotobuf-dev protobuf-compiler
  libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
)
if [ "${1:-}" = --wheel ]; then
  PACKAGES=(
    cmake ninja-build g++ pkg-config zlib1g-dev
    libabsl-dev libprotobuf-dev protobuf-compiler
    libcli11-dev nlohmann-json3-dev
  )
elif [ -n "${1:-}" ]; then
  echo "usage: tools/setup.sh [--wheel]" >&2
  exit 2
fi
if [ "${HLOMEM_WITH_BROWSER:-0}" = 1 ]; then PACKAGES+=(chromium); fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
