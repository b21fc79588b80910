#!/usr/bin/env bash
# Fuzzes the hand-written parsers of untrusted bytes with sanitizers, as CI does:
#   - jpeg_dc: Sources/CVipsShim/{jpeg_dc,png_chunks}.c under libFuzzer + ASan + UBSan (the toolchain's clang),
#     with jpeg_scaled.c (our driving of libjpeg's scaled decode) over the same inputs;
#   - raw_request_head: the memory-hit framing parser (Sources/ProxyCore/HTTP/RawRequestHead.swift) under
#     swiftc -sanitize=fuzzer,address.
# Every file in fuzz/regressions/<target>/ is run first (a crash there fails at once), then each target
# fuzzes for FUZZ_SECONDS (default 60) from its seed corpus in fuzz/corpus/<target>/. New crashes are
# written to fuzz/findings/<target>/; keep each reproducer in fuzz/regressions/<target>/ once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
out=.build-fuzz
mkdir -p "$out" fuzz/findings/jpeg_dc fuzz/findings/raw_request_head

# shellcheck disable=SC2046
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I Sources/CVipsShim/include $(pkg-config --cflags vips) \
  fuzz/jpeg_dc/fuzz_jpeg_dc.c Sources/CVipsShim/jpeg_dc.c Sources/CVipsShim/png_chunks.c \
  Sources/CVipsShim/jpeg_scaled.c $(pkg-config --libs vips) -ljpeg -o "$out/fuzz_jpeg_dc"

# (gold warns about every ASan symbol it cannot export; those lines are dropped.)
swiftc -sanitize=fuzzer,address -parse-as-library -O \
  fuzz/raw_request_head/FuzzRawRequestHead.swift Sources/ProxyCore/HTTP/RawRequestHead.swift \
  -o "$out/fuzz_raw_request_head" 2> >(grep -v "Cannot export local symbol" >&2)

export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for target in jpeg_dc raw_request_head; do
  binary="$out/fuzz_$target"
  regressions=(fuzz/regressions/$target/*)
  if [ -e "${regressions[0]}" ]; then
    echo "fuzz: $target: ${#regressions[@]} regression files"
    "$binary" -runs=0 "${regressions[@]}" 2>&1 | tail -2
  fi
  echo "fuzz: $target: ${seconds}s from fuzz/corpus/$target"
  work=$(mktemp -d)
  cp fuzz/corpus/$target/* "$work/"
  "$binary" -max_total_time="$seconds" -max_len=262144 -rss_limit_mb=1024 -timeout=10 \
    -artifact_prefix="fuzz/findings/$target/" -print_final_stats=1 "$work" 2>&1 | grep -E "^(stat::number_of_executed_units|#[0-9]+ *DONE)|ERROR|SUMMARY" || true
  rm -rf "$work"
  if ls fuzz/findings/$target/crash-* fuzz/findings/$target/timeout-* fuzz/findings/$target/oom-* >/dev/null 2>&1; then
    echo "fuzz: $target found a failing input (fuzz/findings/$target/)" >&2
    exit 1
  fi
done
echo "fuzz: ok"
