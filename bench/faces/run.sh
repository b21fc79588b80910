#!/usr/bin/env bash
# The face cascades of Debian's opencv-data compared on the same photographs at the service's search size
# (640 px on the long side): OpenCV's improved LBP frontal-face cascade (the service's default) against the
# Haar cascade thumbor uses, one thread, best of 5, and the faces each finds.
#   bash bench/faces/run.sh [images...]   (default: Tests/Photographs/*.jpg)
# Needs libopencv-objdetect-dev, libopencv-imgcodecs-dev and opencv-data; builds into a temporary folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-query -W -f='${Status}' libopencv-imgcodecs-dev 2>/dev/null | grep -q "install ok installed" \
  || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopencv-imgcodecs-dev >/dev/null
g++ -O2 -std=c++17 bench/faces/cascade_bench.cpp -I/usr/include/opencv4 -lopencv_objdetect -lopencv_imgproc \
  -lopencv_imgcodecs -lopencv_core -o "$work/cascade_bench"
images=("$@")
[ ${#images[@]} -gt 0 ] || images=(Tests/Photographs/*.jpg)
lscpu | grep "Model name" || true
for image in "${images[@]}"; do
  vips thumbnail "$image" "$work/search.png" 640 --size both
  for cascade in /usr/share/opencv4/lbpcascades/lbpcascade_frontalface_improved.xml \
    /usr/share/opencv4/haarcascades/haarcascade_frontalface_alt2.xml; do
    echo "$(basename "$image") $(basename "$cascade" .xml):"
    "$work/cascade_bench" "$cascade" "$work/search.png" 1.1:20 1.15:20 1.2:24 | sed 's/^/  /'
  done
done
