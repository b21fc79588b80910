#!/usr/bin/env bash
# arm64 with the same bytes (issue #57), on this x86-64 machine with Debian's packages:
#   1. every C file of Sources/CVipsShim, Sources/CCurlShim, fuzz/ and bench/ compiled for aarch64 with
#      Debian's cross compiler (gcc-aarch64-linux-gnu) against the arm64 headers (multiarch -dev packages),
#      and the C++ of Sources/CFaceShim with g++-aarch64-linux-gnu;
#      an x86-only construct without its portable twin fails here;
#   2. Tests/CKernels/kernels_golden.c (the PNG decoder and unfilter, opaque alpha, the Lanczos3 reduces, the
#      JPEG DC decoders, libjpeg's scaled decode reduced) built three ways: x86-64 as the service builds it,
#      x86-64 with the portable twins of the x86 kernels (-DIPX_PORTABLE_KERNELS), and aarch64 run under
#      qemu-user-static; each run's SHA-256 lines must equal Tests/CKernels/golden.txt;
#   3. the fuzz regression files replayed through the aarch64 build of the same decoders.
# libvips42 is not co-installable across architectures (its amd64 build is the service's), so the arm64
# libvips and libopenslide are unpacked into a folder of their own that only qemu's runs see.
# Usage: scripts/check-arm64.sh [--update-golden]
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive

arm64_dev=(libglib2.0-dev:arm64 libjpeg62-turbo-dev:arm64 libdeflate-dev:arm64 libexif-dev:arm64 libgif-dev:arm64
  libwebp-dev:arm64 liblcms2-dev:arm64 libcurl4-openssl-dev:arm64 libxml2-dev:arm64)
if ! dpkg --print-foreign-architectures | grep -qx arm64 || ! command -v aarch64-linux-gnu-gcc >/dev/null; then
  $sudo dpkg --add-architecture arm64
  $sudo apt-get update -qq
fi
# libvips42:arm64's own libraries (Multi-Arch: same, so beside the amd64 ones); libvips42 and libopenslide0
# themselves are unpacked below instead.
mapfile -t arm64_runtime < <(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
  --no-enhances libvips42:arm64 libopenslide0:arm64 | sed -n 's/^ *Depends: \([^<]*:arm64\)$/\1/p' \
  | grep -vx 'libvips42:arm64\|libopenslide0:arm64' | sort -u)
[ ${#arm64_runtime[@]} -gt 10 ] || { echo "check-arm64: libvips42:arm64's dependencies not found (apt lists?)" >&2; exit 1; }
missing=()
for package in gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static file "${arm64_dev[@]}" "${arm64_runtime[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "check-arm64: installing ${missing[*]}" >&2
  # (A postinst that runs an arm64 tool cannot exec it without binfmt; apt carries on.)
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
    || $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The amd64 libvips must still be there (installing libvips42:arm64 would have removed it).
dpkg-query -W -f='${Status}' libvips42:amd64 2>/dev/null | grep -q "install ok installed" \
  || { echo "check-arm64: libvips42:amd64 is gone" >&2; exit 1; }

out=.build-arm64
rm -rf "$out"
mkdir -p "$out/obj" "$out/libvips"
(cd "$out/libvips" && apt-get download libvips42:arm64 libopenslide0:arm64 >/dev/null 2>&1 \
  && for deb in ./*.deb; do dpkg-deb -x "$deb" root; done)
vips_root=$(pwd)/$out/libvips/root/usr/lib/aarch64-linux-gnu
[ -e "$vips_root/libvips.so.42" ] || { echo "check-arm64: could not unpack libvips42:arm64" >&2; exit 1; }

# arm64 flags: the arm64 .pc files for what has them; libvips' headers are the same on both (the amd64
# libvips-dev's), found after the cross compiler's own C library headers.
arm64_pkg() { PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig pkg-config "$@"; }
cflags_arm64="-std=gnu11 -O2 -ffp-contract=off -Wall -Werror=implicit-function-declaration $(arm64_pkg --cflags glib-2.0 gobject-2.0 libjpeg libwebp libwebpdemux libwebpmux lcms2 libexif libcurl libxml-2.0) -idirafter /usr/include"
includes="-I Sources/CVipsShim/include -I Sources/CVipsShim -I Sources/CCurlShim/include"

echo "check-arm64: cross-compiling every C file for aarch64"
count=0
for file in Sources/CVipsShim/*/*.c Sources/CCurlShim/*.c fuzz/*/*.c bench/*/*.c scripts/orc-race/*.c Tests/CKernels/*.c; do
  [ -e "$file" ] || continue
  extra=()
  case "$file" in
    bench/reduce/reduce_bench.c) extra=(-DREDUCE_C="\"$(pwd)/Sources/CVipsShim/reduce/reduce_across.c\"") ;;
    bench/reduce/stubs.c) extra=(-w) ;;  # stand-ins declared loosely on purpose
  esac
  # shellcheck disable=SC2086
  aarch64-linux-gnu-gcc $cflags_arm64 $includes "${extra[@]}" -c "$file" -o "$out/obj/$(echo "$file" | tr / _).o"
  count=$((count + 1))
done
# The C++ face shim (OpenCV's headers are the same on both architectures).
for file in Sources/CFaceShim/*.cpp; do
  aarch64-linux-gnu-g++ -std=c++17 -O2 -Wall -I Sources/CFaceShim/include -I /usr/include/opencv4 -c "$file" \
    -o "$out/obj/$(echo "$file" | tr / _).o"
  count=$((count + 1))
done
echo "check-arm64: $count files compiled"

# The golden harness with the whole shim, as the service links it.
shim_sources=(Sources/CVipsShim/*/*.c)
libs_x86="$(pkg-config --libs vips libwebpdemux libwebpmux lcms2 libexif libxml-2.0) -lgif -ljpeg -ldeflate -lm -ldl -lpthread"
build_x86() {  # build_x86 OUTPUT [FLAGS...]
  local output=$1
  shift
  # shellcheck disable=SC2086
  cc -std=gnu11 -O2 -ffp-contract=off "$@" $includes $(pkg-config --cflags vips libxml-2.0) Tests/CKernels/kernels_golden.c \
    "${shim_sources[@]}" -o "$output" $libs_x86
}
echo "check-arm64: building the golden harness (x86-64, x86-64 portable, aarch64)"
build_x86 "$out/golden-x86"
build_x86 "$out/golden-portable" -DIPX_PORTABLE_KERNELS
# shellcheck disable=SC2086
aarch64-linux-gnu-gcc $cflags_arm64 $includes Tests/CKernels/kernels_golden.c "${shim_sources[@]}" -o "$out/golden-arm64" \
  "$vips_root/libvips.so.42" $(arm64_pkg --libs glib-2.0 gobject-2.0 libjpeg libwebp libwebpdemux libwebpmux lcms2 libexif libxml-2.0) \
  -lgif -ldeflate -lm -ldl -lpthread -Wl,-rpath-link,"$vips_root" -Wl,-rpath-link,/usr/lib/aarch64-linux-gnu
file "$out/golden-arm64" | grep -q "ARM aarch64" || { echo "check-arm64: the harness is not an aarch64 binary" >&2; exit 1; }
# And with the Swift toolchain's clang, which is what SwiftPM compiles the shim with on an arm64 machine.
clang="$(dirname "$(readlink -f "$(command -v swift)")")/clang"
# shellcheck disable=SC2086
"$clang" --target=aarch64-linux-gnu -fuse-ld=lld $cflags_arm64 $includes Tests/CKernels/kernels_golden.c "${shim_sources[@]}" \
  -o "$out/golden-arm64-clang" "$vips_root/libvips.so.42" -L/usr/lib/aarch64-linux-gnu \
  $(arm64_pkg --libs glib-2.0 gobject-2.0 libjpeg libwebp libwebpdemux libwebpmux lcms2 libexif libxml-2.0) -lgif -ldeflate -lm -ldl -lpthread \
  -Wl,-rpath-link,"$vips_root" -Wl,-rpath-link,/usr/lib/aarch64-linux-gnu 2> >(grep -v "warning: argument unused" >&2)

fixtures=(Tests/CKernels/fixtures/*)
run_arm64() { qemu-aarch64-static -L / -E LD_LIBRARY_PATH="$vips_root" -E VIPS_WARNING=0 "$@"; }
"$out/golden-x86" "${fixtures[@]}" > "$out/x86.txt"
"$out/golden-portable" "${fixtures[@]}" > "$out/portable.txt"
run_arm64 "$out/golden-arm64" "${fixtures[@]}" > "$out/arm64.txt"
run_arm64 "$out/golden-arm64-clang" "${fixtures[@]}" > "$out/arm64-clang.txt"
if [ "${1:-}" = "--update-golden" ]; then
  cp "$out/x86.txt" Tests/CKernels/golden.txt
  echo "check-arm64: Tests/CKernels/golden.txt written from the x86-64 run"
fi
status=0
for run in x86 portable arm64 arm64-clang; do
  if diff -u Tests/CKernels/golden.txt "$out/$run.txt" > "$out/$run.diff"; then
    echo "check-arm64: $run: $(grep -c ' [0-9a-f]\{64\}$' "$out/$run.txt") hashed outputs equal to the golden file"
  else
    echo "check-arm64: $run differs from Tests/CKernels/golden.txt:" >&2
    cat "$out/$run.diff" >&2
    status=1
  fi
done
[ "$status" -eq 0 ]

# The fuzz regression files through both architectures' decoders: no crash, and the same bytes.
regressions=(fuzz/regressions/jpeg_dc/*)
"$out/golden-x86" "${regressions[@]}" > "$out/regressions-x86.txt"
run_arm64 "$out/golden-arm64" "${regressions[@]}" > "$out/regressions-arm64.txt"
diff -u "$out/regressions-x86.txt" "$out/regressions-arm64.txt" >&2 \
  || { echo "check-arm64: the fuzz regression files decode differently on aarch64" >&2; exit 1; }
echo "check-arm64: ${#regressions[@]} fuzz regression files: $(wc -l < "$out/regressions-arm64.txt") results, the same on aarch64"
rm -rf "$out"
echo "check-arm64: ok"
