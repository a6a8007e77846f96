#!/usr/bin/env bash
# Installs everything kforge needs to build and test on Debian 12 (run as root).
# Used by the README's first command and by .ci/run, so both see the same machine.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends \
  build-essential g++ clang libomp-dev cmake ninja-build pkg-config git ca-certificates \
  libgtest-dev libgmock-dev \
  libdnnl-dev libopenblas-dev libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libfmt-dev \
  libsqlite3-dev libseccomp-dev libxxhash-dev libcurl4-openssl-dev libcpp-httplib-dev libedit-dev \
  libhiredis-dev redis-server \
  python3 python3-jsonschema clang-format universal-ctags tmux chromium
# The browser tests of `kforge serve` drive chromium with Playwright (tests/web, from npm, pinned
# by its package-lock.json); Node.js from Debian unless one is installed already.
if ! command -v npm >/dev/null; then
  $SUDO apt-get install -y --no-install-recommends nodejs npm
fi
npm ci --no-audit --no-fund --prefix "$(dirname "$0")/../tests/web"
# The front-end libraries `kforge serve` compiles into its page (src/serve/web/package.json).
npm ci --no-audit --no-fund --prefix "$(dirname "$0")/../src/serve/web"
