#!/usr/bin/env bash
# Checks the Prometheus rules in deploy/prometheus/: syntax (promtool check rules) and which alerts fire
# for which series (promtool test rules). Installs Debian's prometheus package (promtool) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v promtool >/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "check-prometheus: installing promtool (Debian's prometheus package)" >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq prometheus >/dev/null
fi
promtool check rules deploy/prometheus/imageproxy-rules.yml
(cd deploy/prometheus && promtool test rules imageproxy-rules.test.yml)
echo "check-prometheus: ok"
