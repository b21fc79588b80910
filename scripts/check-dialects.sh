#!/usr/bin/env bash
# The URL dialects against the originals (issue #59):
#   thumbor: a real thumbor (PyPI, the 7.8.0 ../shared/bench installs) and ImageProxy are asked the same
#     libthumbor-signed URLs over random sizes, fits, alignments, crops, flips and filters; the answers must have
#     the same format and size and the same colours; lossless answers against a thumbor decoding JPEGs whole at SSIM
#     >= 0.97, 0.85 where either side's crop rounding or a small or enlarged answer puts it out of reach (the bar and its
#     reasons: scripts/dialects/thumbor_differential.py; the distribution is printed).
#   imgproxy: its Go server is not installable here; a table of URLs made with the PyPI imgproxy package and by
#     hand, each with the answer imgproxy's documented rules give (scripts/dialects/imgproxy_table.py).
# Sources: Debian's ukui-wallpapers cut to web sizes (downloaded with apt-get download, not installed) and
# photograph-like images made in the run. Network: origin, thumbor and ImageProxy listen on 127.0.0.1 only,
# and where unprivileged namespaces allow it the comparisons run inside `unshare -n` (loopback only).
# Usage: scripts/check-dialects.sh [path/to/ImageProxy]   (default: the debug build)
#        DIALECTS_URLS (default 400) and DIALECTS_SEED (default 20261129) choose the thumbor URLs.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$(realpath "${1:-.build/debug/ImageProxy}")
venv=$(realpath -m .build/dialects-venv)
wallpapers=$(realpath -m .build/dialects-debs/x/usr/share/backgrounds)
if [ -z "${CHECK_DIALECTS_IN_NAMESPACE:-}" ]; then
  if ! "$venv/bin/python" -c "import thumbor, libthumbor, imgproxy, numpy" 2>/dev/null; then
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
      sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
      rm -rf "$venv"; python3 -m venv "$venv"
    fi
    "$venv/bin/pip" install -q --disable-pip-version-check "thumbor==7.8.0" "libthumbor>=2" "imgproxy==1.0.0" numpy
  fi
  if [ ! -f "$wallpapers/calla.png" ]; then
    mkdir -p .build/dialects-debs
    (cd .build/dialects-debs && apt-get download ukui-wallpapers >/dev/null 2>&1 && dpkg-deb -x ukui-wallpapers_*.deb x) \
      || echo "check-dialects: ukui-wallpapers could not be downloaded; comparing on the generated sources only" >&2
  fi
fi
if [ -z "${CHECK_DIALECTS_IN_NAMESPACE:-}" ] && command -v ip >/dev/null && unshare -n true 2>/dev/null; then
  exec unshare -n env CHECK_DIALECTS_IN_NAMESPACE=1 bash -c 'ip link set lo up && exec bash "$0" "$@"' "$0" "$@"
fi
[ -f "$wallpapers/calla.png" ] && export DIALECTS_WALLPAPERS="$wallpapers"
"$venv/bin/python" -u scripts/dialects/thumbor_differential.py "$binary" "${DIALECTS_URLS:-400}" "${DIALECTS_SEED:-20261129}"
"$venv/bin/python" -u scripts/dialects/imgproxy_table.py "$binary"
echo "check-dialects: ok"
