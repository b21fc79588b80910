#!/usr/bin/env bash
# The benchmark, end to end, on loopback: builds the release binary, installs what is missing (nginx,
# wrk, thumbor, pyvips: ../shared/bench/setup_peers.sh; the web-like corpus: bench/corpus.sh), runs the
# shared peers harness (thumbor, nginx image_filter, the libvips ceiling) with ImageProxy as one more row
# for `transform` and `hot`, then ImageProxy's own scenarios (bench/scenarios.py: memory-hit vs nginx
# static with unsigned and signed URLs, transform per source class, disk-hit, dedup-storm, mixed soak,
# overload, SSIM quality per class, the decode floor of baseline misses on both corpora), and prints one
# table with ratios (bench/report.py).
#
# ImageProxy runs as users run it: its default settings, the access log on (written to a file, as in
# production), signed URLs where a row says so. The corpus ($PEERS_DIR/corpus-web, CORPUS to change it)
# is baseline-heavy like the web's JPEGs (13 baseline, 4 progressive), with 4 PNG and 4 WebP sources.
#
#   bash bench/run.sh                 # full: 15 s cells, REPEAT=3, 10-minute mixed soak (about 40 min)
#   bash bench/run.sh --quick         # 5 s cells, one repeat, 1-minute mixed (about 6 min)
#
# Results: bench/results/<run id>/ (peers.jsonl, scenarios.jsonl, table.md with the machine's details).
# Environment: PEERS_DIR (default /tmp/imageproxy-peers; the harness's nginx must be able to read it),
# HARNESS (default ../shared/bench/peers.sh), IMAGEPROXY_* settings for every ImageProxy started,
# BINARY (an ImageProxy built elsewhere, e.g. from an older commit for a before/after comparison; by
# default this checkout's release build).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
harness=${HARNESS:-$root/../shared/bench/peers.sh}
[ -x "$harness" ] || { echo "bench: $harness not found (set HARNESS)" >&2; exit 1; }
export PEERS_DIR=${PEERS_DIR:-/tmp/imageproxy-peers}

quick=0
for argument in "$@"; do [ "$argument" = "--quick" ] && quick=1; done
if [ "$quick" = 1 ]; then
  peers_args=(--quick); duration=5; mixed=60; repeat=1
else
  peers_args=(--repeat "${REPEAT:-3}"); duration=15; mixed=${MIXED_SECONDS:-600}; repeat=${REPEAT:-3}
fi

if [ ! -x "$PEERS_DIR/vips-venv/bin/python" ] || ! command -v wrk >/dev/null || ! command -v nginx >/dev/null; then
  bash "$(dirname "$harness")/setup_peers.sh"
fi
chmod -R a+rX "$PEERS_DIR" 2>/dev/null || true
# The floor scenario's bare decode is libjpeg-turbo's djpeg.
command -v djpeg >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libjpeg-turbo-progs >/dev/null; }
"$PEERS_DIR/vips-venv/bin/python" -c 'import numpy' 2>/dev/null || "$PEERS_DIR/vips-venv/bin/pip" install -q numpy
bash bench/corpus.sh
export CORPUS=${CORPUS:-$PEERS_DIR/corpus-web}
[ -f "$CORPUS/${HOT_SOURCE:-}" ] || export HOT_SOURCE=$(cd "$CORPUS" && ls *.jpg | head -1)

if [ -n "${BINARY:-}" ]; then
  binary=$BINARY
else
  swift build -c release --product ImageProxy
  binary="$(swift build -c release --show-bin-path)/ImageProxy"
fi
run_id=$(date +%Y%m%d-%H%M%S)
out="$root/bench/results/$run_id"
mkdir -p "$out"
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT

# 1. The peers harness, ImageProxy as the row "imageproxy": default settings, access log to a file.
export OURS_NAME=imageproxy
export OURS_CMD="IMAGEPROXY_BIND=127.0.0.1:18090 IMAGEPROXY_CACHE_DIR=$cache IMAGEPROXY_ALLOW_LOOPBACK_SOURCES=true exec $binary 2>>$cache/access.log"
export OURS_URL_TEMPLATE='http://127.0.0.1:18090/img?url={src_enc}&w={w}&format=jpeg'
export OURS_READY_URL=http://127.0.0.1:18090/ready
"$harness" "${peers_args[@]}" | tee "$out/peers.txt"
latest=$(ls -td "$PEERS_DIR"/results/*/ | head -1)
cp "$latest/results.jsonl" "$out/peers.jsonl"

# 2. ImageProxy's own scenarios.
"$PEERS_DIR/vips-venv/bin/python" bench/scenarios.py --binary "$binary" --corpus "$CORPUS" \
  --peers-dir "$PEERS_DIR" --out "$out/scenarios.jsonl" --duration "$duration" --mixed-duration "$mixed"

# The decode floor and the srcset on the other corpora too (the harness's Plasma wallpapers; MATE's
# backgrounds, which no tuning has seen: bench/corpus.sh), as users run it.
"$PEERS_DIR/vips-venv/bin/python" bench/scenarios.py --binary "$binary" --corpus "$PEERS_DIR/corpus" \
  --peers-dir "$PEERS_DIR" --out "$out/scenarios.jsonl" --scenarios floor srcset
"$PEERS_DIR/vips-venv/bin/python" bench/scenarios.py --binary "$binary" --corpus "$PEERS_DIR/corpus-mate" \
  --peers-dir "$PEERS_DIR" --out "$out/scenarios.jsonl" --scenarios floor srcset

# 3. One table.
python3 bench/report.py --peers "$out/peers.jsonl" --scenarios "$out/scenarios.jsonl" --repeat "$repeat" \
  --out "$out/table.md"
cat "$out/table.md"
