#!/usr/bin/env bash
# Installs the system libraries ImageProxy builds against (Debian 12 / Ubuntu), when missing.
# Swift 6.3 itself must already be on PATH (https://swift.org/install).
# Usage: scripts/setup.sh [--tests]   --tests adds what the test suite drives besides the service:
# headless Chromium (the status page's charts are checked in a real browser), Node.js and Python 3 (the
# JavaScript and Python clients' tests run against the binary).
set -euo pipefail
packages=(libvips-dev libwebp-dev libgif-dev libjpeg62-turbo-dev libcurl4-openssl-dev libsqlite3-dev pkg-config ca-certificates)
if [ "${1:-}" = "--tests" ]; then
  packages+=(chromium python3)
  command -v node >/dev/null || packages+=(nodejs)
fi
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "setup: swift is not on PATH (Swift 6.3 is required)" >&2; exit 1; }
