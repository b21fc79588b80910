#!/usr/bin/env bash
# The whole-PNG decoder (Sources/CVipsShim/png/png_decode.c) against libspng and libvips' pngload (libpng),
# file by file: `bash bench/png_decode/run.sh [FILE...]` (default: every PNG of the benchmark corpora under
# ${PEERS_DIR:-/tmp/imageproxy-peers}). "same" says whether libspng's pixels equal ours byte for byte;
# times are the best of seven, one thread, from memory to an image in memory. Needs libvips-dev and
# libspng-dev (installed here when missing).
# shellcheck source=../c-harness.sh
source "$(dirname "$0")/../c-harness.sh"
[ -f /usr/include/spng.h ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libspng-dev >/dev/null; }
shim="$root/Sources/CVipsShim"
"$clang" -O2 -I"$shim/include" -I"$shim" $(pkg-config --cflags vips) "$here/png_decode_bench.c" "$shim/png/png_decode.c" \
  "$shim/memory/mapped_pixels.c" -o "$work/png_decode_bench" $(pkg-config --libs vips) -lspng -ldeflate -w
if [ $# -eq 0 ]; then
  shopt -s nullglob
  set -- "${PEERS_DIR:-/tmp/imageproxy-peers}"/corpus*/*.png
fi
"$work/png_decode_bench" "$@"
