#!/usr/bin/env bash
# #19's libvips crashes, root cause kept under test: liborc up to 0.4.33 races between compiling an orc
# program on one thread and freeing one on another, and the heap corruption it leaves shows up as a
# segfault in liborc, glibc's malloc checks, or libvips' `vips_object_dispose_argument` assertion.
# scripts/orc-race/orc_race.c builds and drops libvips' vectorised reduces on 4 threads:
#   - linked with Sources/CVipsShim/vips/orc_serialized.c (the service's lock around liborc's compile and free),
#     it must run ORC_RACE_SECONDS (default 30) without a crash or a failed operation: CI fails otherwise;
#   - linked without it (the control), it is expected to die within ORC_RACE_CONTROL_SECONDS (default 20) on
#     a liborc that has the race; if it does not, the note says so (a newer liborc), and CI does not fail.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${ORC_RACE_SECONDS:-30}
control_seconds=${ORC_RACE_CONTROL_SECONDS:-20}
out=.build-orc-race
mkdir -p "$out"
# shellcheck disable=SC2046
cc -O2 -g -DORC_RACE_SERIALIZED -I Sources/CVipsShim/include $(pkg-config --cflags vips) \
  scripts/orc-race/orc_race.c Sources/CVipsShim/vips/orc_serialized.c -rdynamic \
  $(pkg-config --libs vips) -lpthread -ldl -o "$out/orc_race_serialized"
# shellcheck disable=SC2046
cc -O2 -g $(pkg-config --cflags vips) scripts/orc-race/orc_race.c $(pkg-config --libs vips) -lpthread \
  -o "$out/orc_race_unserialized"

echo "orc-race: liborc $(pkg-config --modversion orc-0.4 2>/dev/null || echo '(version unknown)'), control without the lock (${control_seconds} s)"
set +e
timeout --signal=KILL $((control_seconds + 10)) "$out/orc_race_unserialized" 4 "$control_seconds" > "$out/control.log" 2>&1
control=$?
set -e
if [ "$control" -eq 0 ]; then
  echo "orc-race: the control ran clean ($(tail -1 "$out/control.log")): this liborc may have the fix (0.4.34+)"
else
  signal=""; [ "$control" -gt 128 ] && signal=" (SIG$(kill -l $((control - 128))))"
  echo "orc-race: the control died as expected, exit $control$signal: $(grep -v '^operations' "$out/control.log" | tail -1 | cut -c1-160)"
fi

echo "orc-race: with orc_serialized.c, 4 threads for ${seconds} s"
if ! timeout --signal=KILL $((seconds + 30)) "$out/orc_race_serialized" 4 "$seconds" > "$out/serialized.log" 2>&1; then
  echo "orc-race: FAILED with the lock: $(tail -3 "$out/serialized.log")" >&2
  exit 1
fi
echo "orc-race: passed ($(tail -1 "$out/serialized.log"))"
