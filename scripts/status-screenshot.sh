#!/usr/bin/env bash
# Starts the service on a free loopback port, sends it a little traffic, and saves a screenshot of the
# status page taken with headless Chromium (Debian's `chromium`), for people to look at.
# Usage: scripts/status-screenshot.sh [output.png]   (default: status.png)
set -euo pipefail
cd "$(dirname "$0")/.."
output=$(realpath -m "${1:-status.png}")
command -v chromium >/dev/null || { echo "status-screenshot: install chromium (apt-get install chromium)" >&2; exit 1; }
swift build --product ImageProxy >/dev/null
binary="$(swift build --show-bin-path)/ImageProxy"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# A local origin with one generated image (libvips' own command line tool, else a tiny PPM).
mkdir -p "$work/origin"
if command -v vips >/dev/null; then vips black "$work/origin/a.jpg" 640 480; else printf 'P3 1 1 255 0 0 0' > "$work/origin/a.ppm"; fi
python3 -m http.server 18781 --bind 127.0.0.1 --directory "$work/origin" >/dev/null 2>&1 &
IMAGEPROXY_BIND=127.0.0.1:18780 IMAGEPROXY_CACHE_DIR="$work/cache" IMAGEPROXY_ALLOW_LOOPBACK_SOURCES=true \
  IMAGEPROXY_STATUS_SAMPLE_SECONDS=1 "$binary" >"$work/service.log" 2>&1 &
for _ in $(seq 50); do curl -sf http://127.0.0.1:18780/ready >/dev/null 2>&1 && break; sleep 0.2; done
for width in 100 200 300 100 200; do
  curl -s -o /dev/null "http://127.0.0.1:18780/img?url=http%3A%2F%2F127.0.0.1%3A18781%2Fa.jpg&w=$width" || true
done
curl -s -o /dev/null "http://127.0.0.1:18780/img?url=http%3A%2F%2F127.0.0.1%3A18781%2Fmissing.jpg" || true
sleep 3  # a few one-second chart samples
# Loopback only: any other address would go to a proxy that does not exist (127.0.0.1:9).
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1250,1400 \
  --disable-background-networking --disable-component-update --no-first-run --proxy-server=http://127.0.0.1:9 \
  --screenshot="$output" "http://127.0.0.1:18780/status?url=http%3A%2F%2F127.0.0.1%3A18781%2Fa.jpg&w=200" 2>/dev/null
echo "status-screenshot: wrote $output"
