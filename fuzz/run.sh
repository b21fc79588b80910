#!/usr/bin/env bash
# Fuzzes the hand-written parsers of untrusted bytes with sanitizers, as CI does:
#   - jpeg_dc: Sources/CVipsShim/{jpeg_dc,png_chunks,png_decode}.c under libFuzzer + ASan + UBSan (the toolchain's clang;
#     png_decode.c without its CRC check, so that mutations reach the inflate and the unfilter),
#     with jpeg_scaled.c (our driving of libjpeg's scaled decode), jpeg_header.c (the header read by libjpeg and
#     libexif), reduce_across.c (the one-pass reduce of each decode, also encoded row by row by jpeg_encode.c), thread_buffer.c and mapped_pixels.c (the reused decode buffer and the large mapped ones both
#     write into) over the same inputs; jpeg_memory.c (libjpeg's large blocks in huge pages) is left out, so
#     that AddressSanitizer keeps watching libjpeg's buffers from malloc (jxl_pipeline builds it in);
#   - containers: Sources/CVipsShim/{frame_count,icc_profile,webp_scaled}.c (GIF/WebP frame counts, the WebP
#     metadata rewrite, the ICC profile check, our driving of libwebp's scaled decode into the reused
#     buffer of thread_buffer.c) under libFuzzer + ASan + UBSan;
#   - raw_request_head: the memory-hit framing parser (Sources/ProxyCore/FastPath/RawRequestHead.swift) under
#     swiftc -sanitize=fuzzer,address;
#   - request_intake: every value a request brings (query, client hints, Save-Data, Accept) through
#     ImageRequest parsing, the hints and the variant key (Sources/ImageCore/Request), the resize box held to
#     the output bound on random header sizes (ResizeBox, ResizeBox+OutputBound, SourceHeader), and the memory-hit
#     front's framing checks, under swiftc -sanitize=fuzzer,address; it links swift-crypto's objects from
#     the debug build (`swift build` first when they are missing);
#   - svg: Sources/CVipsShim/svg/svg_check.c (what an SVG source refers to, walked over libxml2's tree) with
#     the dictionary fuzz/svg/svg.dict;
#   - jxl_pipeline: JPEG XL sources (`image.allowJXLInput`) through the header read and the thumbnail the
#     transform runs, libvips started as the service starts it (all of Sources/CVipsShim instrumented).
# Every file in fuzz/regressions/<target>/ is run first (a crash there fails at once), then each target
# fuzzes for FUZZ_SECONDS (default 60) from its seed corpus in fuzz/corpus/<target>/. New crashes are
# written to fuzz/findings/<target>/; keep each reproducer in fuzz/regressions/<target>/ once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
out=.build-fuzz
targets=(jpeg_dc containers svg raw_request_head request_intake jxl_pipeline)
for target in "${targets[@]}"; do mkdir -p "$out" "fuzz/findings/$target"; done

# shellcheck disable=SC2046
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I Sources/CVipsShim/include $(pkg-config --cflags vips) \
  -DIPX_PNG_IGNORE_CRC fuzz/jpeg_dc/fuzz_jpeg_dc.c Sources/CVipsShim/jpeg/jpeg_dc.c Sources/CVipsShim/png/png_chunks.c Sources/CVipsShim/png/png_decode.c \
  Sources/CVipsShim/jpeg/jpeg_scaled.c Sources/CVipsShim/jpeg/jpeg_header.c Sources/CVipsShim/vips/icc_profile.c \
  Sources/CVipsShim/reduce/reduce_across.c Sources/CVipsShim/memory/thread_buffer.c Sources/CVipsShim/memory/mapped_pixels.c \
  Sources/CVipsShim/jpeg/jpeg_encode.c $(pkg-config --libs vips lcms2 libexif) -ljpeg -ldeflate -o "$out/fuzz_jpeg_dc" 2> >(grep -v "Cannot export local symbol" >&2)

# shellcheck disable=SC2046
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I Sources/CVipsShim/include $(pkg-config --cflags vips) \
  fuzz/containers/fuzz_containers.c Sources/CVipsShim/webp/frame_count.c Sources/CVipsShim/vips/icc_profile.c \
  Sources/CVipsShim/webp/webp_scaled.c Sources/CVipsShim/memory/thread_buffer.c Sources/CVipsShim/memory/mapped_pixels.c \
  $(pkg-config --libs vips libwebp libwebpmux libwebpdemux lcms2) -lgif -o "$out/fuzz_containers" 2> >(grep -v "Cannot export local symbol" >&2)

# shellcheck disable=SC2046
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I Sources/CVipsShim/include $(pkg-config --cflags vips libxml-2.0) \
  fuzz/svg/fuzz_svg.c Sources/CVipsShim/svg/svg_check.c \
  $(pkg-config --libs libxml-2.0) -o "$out/fuzz_svg" 2> >(grep -v "Cannot export local symbol" >&2)

# shellcheck disable=SC2046
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I Sources/CVipsShim/include $(pkg-config --cflags vips) \
  $(pkg-config --cflags libxml-2.0) fuzz/jxl_pipeline/fuzz_jxl_pipeline.c Sources/CVipsShim/*/*.c \
  $(pkg-config --libs vips libwebpmux libwebpdemux lcms2 libexif libxml-2.0) -lgif -ljpeg -ldeflate -o "$out/fuzz_jxl_pipeline" 2> >(grep -v "Cannot export local symbol" >&2)

# (gold warns about every ASan symbol it cannot export; those lines are dropped.)
swiftc -sanitize=fuzzer,address -parse-as-library -O -D FUZZ_STANDALONE \
  fuzz/raw_request_head/FuzzRawRequestHead.swift Sources/ProxyCore/FastPath/RawRequestHead.swift \
  Sources/ImageCore/Request/ClientHints.swift Sources/ProxyCore/Routes/ClientHints+HeaderNames.swift \
  -o "$out/fuzz_raw_request_head" 2> >(grep -v "Cannot export local symbol" >&2)

# The intake links the real SHA-256 (swift-crypto) from the debug build's objects.
[ -d .build/debug/Crypto.build ] || swift build --product ImageProxy >/dev/null
crypto_objects=()
while IFS= read -r object; do crypto_objects+=("$object"); done < <(find .build/debug/Crypto.build \
  .build/debug/CryptoBoringWrapper.build .build/debug/CCryptoBoringSSL.build .build/debug/CCryptoBoringSSLShims.build -name '*.o')
crypto_include=.build/checkouts/swift-crypto/Sources
swiftc -sanitize=fuzzer,address -parse-as-library -O -D FUZZ_STANDALONE \
  fuzz/request_intake/FuzzRequestIntake.swift Sources/ImageCore/Request/*.swift Sources/ImageCore/Request/Overlays/*.swift Sources/ImageCore/Dialects/*.swift \
  Sources/ImageCore/SHA256Hex.swift Sources/ImageCore/Imaging/Decode/SourceFormat.swift \
  Sources/ImageCore/Imaging/Geometry/ResizeBox.swift Sources/ImageCore/Imaging/Geometry/ResizeBox+OutputBound.swift \
  Sources/ImageCore/Imaging/Decode/SourceHeader.swift Sources/ImageCore/Imaging/Faces/FaceBox.swift \
  Sources/ImageCore/ReportableError.swift Sources/ProxyCore/FastPath/RawRequestHead.swift \
  Sources/ProxyCore/Routes/ClientHints+HeaderNames.swift -I .build/debug/Modules \
  -Xcc -fmodule-map-file=$crypto_include/CCryptoBoringSSL/include/module.modulemap \
  -Xcc -fmodule-map-file=$crypto_include/CCryptoBoringSSLShims/include/module.modulemap \
  "${crypto_objects[@]}" -o "$out/fuzz_request_intake" >"$out/request_intake.log" 2>&1 \
  || { grep -v "Cannot export local symbol" "$out/request_intake.log" >&2; exit 1; }

export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for target in "${targets[@]}"; do
  binary="$out/fuzz_$target"
  regressions=(fuzz/regressions/$target/*)
  if [ -e "${regressions[0]}" ]; then
    echo "fuzz: $target: ${#regressions[@]} regression files"
    "$binary" -runs=0 "${regressions[@]}" >"$out/$target.regressions.log" 2>&1 \
      || { echo "fuzz: $target: a regression file fails:" >&2; tail -40 "$out/$target.regressions.log" >&2; exit 1; }
  fi
  echo "fuzz: $target: ${seconds}s from fuzz/corpus/$target"
  work=$(mktemp -d)
  cp fuzz/corpus/$target/* "$work/"
  # The whole run goes to a log (libjxl alone prints thousands of lines of its own diagnostics); CI's
  # output keeps the executed-units count and, on a failure, the sanitizer's report.
  log="$out/$target.fuzz.log"
  dictionary=()
  [ -e "fuzz/$target/$target.dict" ] && dictionary=(-dict="fuzz/$target/$target.dict")
  "$binary" "${dictionary[@]}" -max_total_time="$seconds" -max_len=262144 -rss_limit_mb=1024 -timeout=10 \
    -artifact_prefix="fuzz/findings/$target/" -print_final_stats=1 "$work" >"$log" 2>&1 || true
  rm -rf "$work"
  if ls fuzz/findings/$target/crash-* fuzz/findings/$target/timeout-* fuzz/findings/$target/oom-* >/dev/null 2>&1; then
    echo "fuzz: $target found a failing input (fuzz/findings/$target/); the end of $log:" >&2
    grep -E "^==[0-9]+==|SUMMARY:|runtime error|^ +#[0-9]+ 0x" "$log" | tail -60 >&2 || true
    exit 1
  fi
  # A run that never got going (the binary failed to start, or stopped at once) fails too.
  grep -E "^stat::number_of_executed_units|^#[0-9]+ *DONE" "$log" \
    || { echo "fuzz: $target did not run; the end of $log:" >&2; tail -40 "$log" >&2; exit 1; }
done
echo "fuzz: ok"
