# Sourced by the C micro-benchmarks (bench/reduce/run.sh, bench/jpeg_dc/run.sh): strict mode, the
# script's folder ($here), the repository ($root), the Swift toolchain's clang ($clang) and a scratch
# folder ($work) removed on exit.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
clang="$(dirname "$(readlink -f "$(command -v swift)")")/clang"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
