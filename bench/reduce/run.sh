#!/usr/bin/env bash
# The one-pass Lanczos3 reduce (Sources/CVipsShim/reduce/reduce_across.c) timed on its own, optionally against
# the same file at another revision: `bash bench/reduce/run.sh [REVISION]`. Equal checksums mean the same
# output bytes. Needs libvips-dev (headers) and the Swift toolchain's clang. REDUCE_CFLAGS adds flags to
# both builds: `REDUCE_CFLAGS=-DIPX_PORTABLE_KERNELS` times the portable path (no AVX2 clones) on x86.
# shellcheck source=../c-harness.sh
source "$(dirname "$0")/../c-harness.sh"
build() { # source-file binary
  # shellcheck disable=SC2086
  "$clang" -O2 -ffp-contract=off ${REDUCE_CFLAGS:-} -DREDUCE_C="\"$1\"" -I"$root/Sources/CVipsShim/include" -I"$root/Sources/CVipsShim" \
    $(pkg-config --cflags vips) "$here/reduce_bench.c" "$here/stubs.c" -o "$2" $(pkg-config --libs vips) -lm -w
}
build "$root/Sources/CVipsShim/reduce/reduce_across.c" "$work/current"
if [ $# -ge 1 ]; then
  git -C "$root" show "$1:Sources/CVipsShim/reduce/reduce_across.c" > "$work/reduce_across.c"
  build "$work/reduce_across.c" "$work/revision"
  for round in 1 2; do
    echo "== $1"; "$work/revision"
    echo "== working tree"; "$work/current"
  done
else
  "$work/current"
fi
