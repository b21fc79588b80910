#!/usr/bin/env bash
# Checks the HTTP contract: validates api/openapi.json (openapi-spec-validator), then runs schemathesis
# against the real binary with a loopback origin serving clients/fixtures/photo.jpg: no 5xx and no status,
# content type, header or body outside the document. Time-bounded (OPENAPI_SECONDS, default 120).
# Network: the service only fetches from 127.0.0.1 (security.allowedHosts), and where unprivileged
# namespaces allow it the whole run happens inside `unshare -n` (loopback only).
# Usage: scripts/check-openapi.sh [path/to/ImageProxy]   (default: the debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$(realpath "${1:-.build/debug/ImageProxy}")
seconds=${OPENAPI_SECONDS:-120}
venv=.build/openapi-venv
if [ ! -x "$venv/bin/schemathesis" ]; then
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
    rm -rf "$venv"; python3 -m venv "$venv"
  fi
  "$venv/bin/pip" install -q --disable-pip-version-check "openapi-spec-validator>=0.7" "schemathesis>=4.0,<5"
fi
[ -n "${CHECK_OPENAPI_IN_NAMESPACE:-}" ] || "$venv/bin/openapi-spec-validator" api/openapi.json
if [ -z "${CHECK_OPENAPI_IN_NAMESPACE:-}" ] && command -v ip >/dev/null && unshare -n true 2>/dev/null; then
  exec unshare -n env CHECK_OPENAPI_IN_NAMESPACE=1 bash -c 'ip link set lo up && exec bash "$0" "$@"' "$0" "$@"
fi

work=""
run() {
  work=$(mktemp -d)
  trap 'kill $(jobs -p) 2>/dev/null || true; [ -z "$work" ] || rm -rf "$work"' EXIT
  mkdir -p "$work/origin"
  cp clients/fixtures/photo.jpg "$work/origin/photo.jpg"
  python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$work/origin" >"$work/origin.log" 2>&1 &
  local origin_port=""
  for _ in $(seq 100); do
    origin_port=$(grep -o 'port [0-9]*' "$work/origin.log" | head -1 | cut -d' ' -f2 || true)
    [ -n "$origin_port" ] && break; sleep 0.1
  done
  env -u CHECK_OPENAPI_IN_NAMESPACE IMAGEPROXY_BIND=127.0.0.1:0 IMAGEPROXY_CACHE_DIR="$work/cache" IMAGEPROXY_ALLOW_LOOPBACK_SOURCES=true \
    IMAGEPROXY_SECURITY_ALLOWED_HOSTS=127.0.0.1 IMAGEPROXY_CACHE_ADMIN_TOKEN=openapi-token \
    "$binary" >"$work/service.log" 2>&1 &
  local port=""
  for _ in $(seq 200); do
    port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/service.log" | head -1 | cut -d: -f2 || true)
    [ -n "$port" ] && break; sleep 0.1
  done
  [ -n "$port" ] && [ -n "$origin_port" ] || { echo "check-openapi: service ($port) or origin ($origin_port) did not start" >&2; cat "$work/service.log" "$work/origin.log" >&2; exit 1; }
  # The document's example source, pointed at the loopback origin, so that examples are real images.
  sed "s#https://images.example.com/photo.jpg#http://127.0.0.1:$origin_port/photo.jpg#" api/openapi.json >"$work/openapi.json"
  timeout $((seconds + 60)) "$venv/bin/schemathesis" run "$work/openapi.json" --url "http://127.0.0.1:$port" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
    --header "Authorization: Bearer openapi-token" --max-time "$seconds" --max-examples 40 --request-timeout 20 \
    --seed 20261123 --no-color
  if grep -q "Fatal\|panic" "$work/service.log"; then echo "check-openapi: the service crashed" >&2; cat "$work/service.log" >&2; exit 1; fi
}

run
echo "check-openapi: ok"
