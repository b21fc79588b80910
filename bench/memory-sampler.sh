#!/usr/bin/env bash
# Samples where a running ImageProxy's memory is, every 2 s, until stopped: one line per sample with
#   unix time, VmHWM (kB), RSS, malloc's live bytes, malloc's free bytes in its heaps, libvips' tracked
#   memory now and its high-water, the memory tier's bytes, the disk writes in flight (MB).
# RSS - malloc live - malloc free is what lives outside malloc (code, stacks, libvips' own mappings).
# Usage: bash bench/memory-sampler.sh OUT [PORT]   (PORT defaults to bench/scenarios.py's 18190)
set -uo pipefail
out=$1
port=${2:-18190}
echo "# time vmhwm_kb rss_mb malloc_in_use_mb malloc_free_mb vips_mb vips_highwater_mb memory_tier_mb pending_write_mb" >> "$out"
while true; do
  metrics=$(curl -s --max-time 1 "http://127.0.0.1:$port/metrics") || { sleep 1; continue; }
  [ -z "$metrics" ] && { sleep 1; continue; }
  pid=$(pgrep -x ImageProxy | head -1)
  hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
  echo "$(date +%s) ${hwm:-0} $(awk '
    /^process_resident_memory_bytes / { r = $2 } /^imageproxy_malloc_in_use_bytes / { a = $2 }
    /^imageproxy_malloc_free_bytes / { f = $2 } /^imageproxy_vips_memory_bytes / { v = $2 }
    /^imageproxy_vips_memory_highwater_bytes / { h = $2 } /^imageproxy_cache_bytes\{tier="memory"\}/ { t = $2 }
    /^imageproxy_cache_pending_write_bytes / { p = $2 }
    END { printf "%d %d %d %d %d %d %d", r / 1e6, a / 1e6, f / 1e6, v / 1e6, h / 1e6, t / 1e6, p / 1e6 }' <<< "$metrics")" >> "$out"
  sleep 2
done
