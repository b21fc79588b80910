#!/usr/bin/env bash
# The JPEG 1/8 DC decoder (Sources/CVipsShim/jpeg/jpeg_dc.c) against libjpeg's own 1/8 decode, file by file:
# `bash bench/jpeg_dc/run.sh [--quarter=K] [FILE...]` (default: every JPEG of the benchmark corpora under
# ${PEERS_DIR:-/tmp/imageproxy-peers}). With --quarter=K, its 1/4 decode of baseline files (the first K
# coefficients of each block read; 5 is what the service uses, 64 is libjpeg's arithmetic exactly) against
# libjpeg's 1/4 decode. "worst" is the largest difference of any sample (0: libjpeg's image exactly), "mean"
# the mean one; times are the best of seven, one thread. Needs libvips-dev and libjpeg's headers.
# shellcheck source=../c-harness.sh
source "$(dirname "$0")/../c-harness.sh"
shim="$root/Sources/CVipsShim"
"$clang" -O2 -I"$shim/include" -I"$shim" $(pkg-config --cflags vips) "$here/jpeg_dc_bench.c" "$shim/jpeg/jpeg_dc.c" \
  "$shim/memory/thread_buffer.c" "$shim/memory/mapped_pixels.c" -o "$work/jpeg_dc_bench" $(pkg-config --libs vips) -ljpeg -w
mode=()
if [ $# -gt 0 ] && [[ "$1" == --quarter=* ]]; then
  mode=("$1")
  shift
fi
if [ $# -eq 0 ]; then
  shopt -s nullglob
  set -- "${PEERS_DIR:-/tmp/imageproxy-peers}"/corpus*/*.jpg
fi
"$work/jpeg_dc_bench" "${mode[@]}" "$@"
