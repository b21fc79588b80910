#!/usr/bin/env bash
# Micro-benchmarks of ProxyServer (request parser, variant key, memory LRU, priority queue) with
# ordo-one/benchmark. Arguments go to `swift package benchmark` (e.g. `baseline update main`,
# `baseline compare main` to see a regression against a stored baseline).
set -euo pipefail
cd "$(dirname "$0")"
swift package --allow-writing-to-package-directory benchmark "$@"
