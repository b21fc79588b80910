#!/usr/bin/env bash
# Builds the release binary and runs the shared peers harness (../shared/bench/peers.sh: thumbor,
# nginx image_filter and the libvips ceiling, with wrk on loopback) with ImageProxy as one more row.
# Arguments go to peers.sh (e.g. --quick, --repeat 3, --scenarios "transform hot").
# Results: $PEERS_DIR/results/<run id>/ (table.txt, results.jsonl, machine details in peers.log).
set -euo pipefail
cd "$(dirname "$0")/.."
harness=${HARNESS:-../shared/bench/peers.sh}
[ -x "$harness" ] || { echo "bench: $harness not found (set HARNESS)" >&2; exit 1; }
swift build -c release --product ImageProxy
binary="$(swift build -c release --show-bin-path)/ImageProxy"
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
export OURS_NAME=${OURS_NAME:-imageproxy}
export OURS_CMD="IMAGEPROXY_BIND=127.0.0.1:18090 IMAGEPROXY_CACHE_DIR=$cache IMAGEPROXY_ALLOW_LOOPBACK_SOURCES=true IMAGEPROXY_LOG_LEVEL=warning IMAGEPROXY_QUEUE_MAX_PENDING=4096 exec $binary"
export OURS_URL_TEMPLATE='http://127.0.0.1:18090/img?url={src_enc}&w={w}&format=jpeg'
export OURS_READY_URL=http://127.0.0.1:18090/ready
"$harness" "$@"
