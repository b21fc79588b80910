#!/usr/bin/env bash
# Builds the web-like benchmark corpus in $PEERS_DIR/corpus-web (idempotent; nothing of it is committed).
#
# The web's JPEGs are mostly baseline (about three in four), a minority progressive; pages also serve
# PNG and WebP. The corpus has that mix, from wallpapers Debian ships (photographs and renders at
# 2560-5120 px), each file's class in its name:
#   baseline-*.jpg     13: ukui-wallpapers' four baseline 3640-3840x2400 files and five Plasma files as
#                      shipped (4:4:4), and four 3840x2160 Plasma renders saved as typical web JPEGs
#                      (baseline, 4:2:0, quality 82)
#   progressive-*.jpg   4: ukui's and Plasma's progressive files as shipped, and two renders saved
#                      progressive (4:2:0, quality 82)
#   png-*.png           4: ukui's 3640-3700x2400 PNGs
#   webp-*.webp         4: gnome-backgrounds' 4096x4096 WebPs
#
# And a second corpus that no tuning has seen, in $PEERS_DIR/corpus-mate (#60), from mate-backgrounds: photographs
# and renders at 1280-3840 px, smaller than the first corpus's and shipped as their authors saved them:
#   baseline-*.jpg     11 as shipped;   progressive-*.jpg 3 as shipped (Elephants at 3840x2160 among them)
#   png-*.png           4 (RGBA renders and RGB photographs);   webp-*.webp 3 saved from them (quality 80)
# The packages are only downloaded and unpacked here (apt-get download, dpkg-deb -x), not installed.
set -euo pipefail
PEERS_DIR=${PEERS_DIR:-/tmp/imageproxy-peers}

mate_corpus() {
  local out="$PEERS_DIR/corpus-mate" debs="$PEERS_DIR/debs"
  [ "$(ls "$out" 2>/dev/null | wc -l)" -ge 21 ] && return 0
  mkdir -p "$debs/x" "$out"
  (cd "$debs" && { ls mate-backgrounds_*.deb >/dev/null 2>&1 || apt-get download mate-backgrounds >/dev/null; }
    dpkg-deb -x mate-backgrounds_*.deb x)
  local mate="$debs/x/usr/share/backgrounds/mate"
  for name in GreenTraditional; do cp "$mate/desktop/$name.jpg" "$out/baseline-$name.jpg"; done
  for name in Aqua Blinds Dune Garden LadyBird RainDrops Storm TwoWings Wood YellowFlower; do
    cp "$mate/nature/$name.jpg" "$out/baseline-$name.jpg"
  done
  cp "$mate/abstract/Elephants_3840x2160.jpg" "$out/progressive-Elephants.jpg"
  for name in FreshFlower GreenMeadow; do cp "$mate/nature/$name.jpg" "$out/progressive-$name.jpg"; done
  cp "$mate/abstract/Gulp.png" "$out/png-Gulp.png"
  cp "$mate/abstract/Flow.png" "$out/png-Flow.png"
  cp "$mate/desktop/MATE-Stripes-Dark.png" "$out/png-MATE-Stripes-Dark.png"
  cp "$mate/desktop/Ubuntu-Mate-Cold-no-logo.png" "$out/png-Ubuntu-Mate-Cold.png"
  vips copy "$mate/desktop/Ubuntu-Mate-Warm-no-logo.png" "$out/webp-Ubuntu-Mate-Warm.webp[Q=80,strip]"
  vips copy "$mate/abstract/Silk.png" "$out/webp-Silk.webp[Q=80,strip]"
  vips copy "$mate/nature/Storm.jpg" "$out/webp-Storm.webp[Q=80,strip]"
  chmod -R a+rX "$out"
  echo "[corpus] $(ls "$out" | wc -l) files in $out" >&2
}

out="$PEERS_DIR/corpus-web"
if [ "$(ls "$out" 2>/dev/null | wc -l)" -ge 25 ]; then
  mate_corpus
  exit 0
fi
command -v vips >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libvips-tools >/dev/null; }
[ -d /usr/share/wallpapers/Canopee ] || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends plasma-workspace-wallpapers >/dev/null
}
debs="$PEERS_DIR/debs"
mkdir -p "$debs/x" "$out"
(cd "$debs" && { ls ukui-wallpapers_*.deb gnome-backgrounds_*.deb >/dev/null 2>&1 || apt-get download ukui-wallpapers gnome-backgrounds >/dev/null; }
  for deb in ukui-wallpapers_*.deb gnome-backgrounds_*.deb; do dpkg-deb -x "$deb" x; done)
ukui="$debs/x/usr/share/backgrounds"
plasma=/usr/share/wallpapers

for name in 2004default firstgeneration string the-mouse; do cp "$ukui/$name.jpg" "$out/baseline-$name.jpg"; done
cp "$ukui/rhythm.jpg" "$out/progressive-rhythm.jpg"
for name in DarkestHour FallenLeaf Grey OneStandsOut; do cp "$plasma/$name/contents/images/2560x1600.jpg" "$out/baseline-$name.jpg"; done
cp "$plasma/PastelHills/contents/images/3200x2000.jpg" "$out/baseline-PastelHills.jpg"
cp "$plasma/summer_1am/contents/images/2560x1600.jpg" "$out/progressive-summer_1am.jpg"
for name in Canopee Cluster Kokkini Opal; do
  vips copy "$plasma/$name/contents/images/3840x2160.png" "$out/baseline-web-$name.jpg[Q=82,subsample-mode=on,strip]"
done
for name in Altai Kay; do
  vips resize "$plasma/$name/contents/images/5120x2880.png" "$out/progressive-web-$name.jpg[Q=82,subsample-mode=on,interlace,strip]" 0.75
done
for name in calla city desert goldfish; do cp "$ukui/$name.png" "$out/png-$name.png"; done
for name in adwaita-l licorice-l pixels-d wood-l; do cp "$ukui/gnome/$name.webp" "$out/webp-$name.webp"; done
chmod -R a+rX "$out"
echo "[corpus] $(ls "$out" | wc -l) files in $out" >&2
mate_corpus
