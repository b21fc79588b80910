#!/usr/bin/env bash
# The CPU floor of a 300 px thumbnail of each baseline JPEG, one thread, no HTTP (bench/RESULTS.md):
# libjpeg's draft-scale decode, ImageProxy's libvips calls, and thumbor's Pillow path on the same files.
# Usage: bash bench/floor/run.sh [files...]   (default: the baseline class of $PEERS_DIR/corpus-web)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
peers=${PEERS_DIR:-/tmp/imageproxy-peers}
files=("$@")
[ ${#files[@]} -gt 0 ] || files=("$peers"/corpus-web/baseline-*.jpg)
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
gcc -O2 -o "$build/decode_floor" "$here/decode_floor.c" $(pkg-config --cflags --libs vips) -ljpeg
VIPS_WARNING=0 "$build/decode_floor" "${files[@]}" 2>/dev/null
echo
"$peers/thumbor-venv/bin/python" "$here/pillow_floor.py" "${files[@]}"
