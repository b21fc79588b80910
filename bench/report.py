#!/usr/bin/env python3
"""One markdown table from a bench run: the peers harness's rows (median of the repeats) with ratios to
thumbor, nginx image_filter and the libvips ceiling, ImageProxy's own scenarios, and each target of the
benchmark issue marked as met or missed. Machine details head the file."""
import argparse
import json
import platform
import subprocess
import time


def load(path):
    with open(path) as file:
        return [json.loads(line) for line in file if line.strip()]


def median_rows(records):
    groups = {}
    for record in records:
        if record.get("scenario") == "ceiling" or record.get("rps") is None:
            continue
        groups.setdefault((record["server"], record["scenario"], record["conc"]), []).append(record)
    rows = {}
    for key, group in groups.items():
        group.sort(key=lambda record: record["rps"])
        row = dict(group[len(group) // 2])
        row["spread"] = f"{group[0]['rps']:.1f}-{group[-1]['rps']:.1f}" if len(group) > 1 else ""
        rows[key] = row
    ceilings = sorted(record["thumbs_per_s"] for record in records if record.get("scenario") == "ceiling")
    return rows, (ceilings[len(ceilings) // 2] if ceilings else None)


def command(*arguments):
    try:
        return subprocess.run(arguments, capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:
        return "?"


def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in command("lscpu").splitlines() if line.startswith("Model name")), "?")
    return (f"{time.strftime('%Y-%m-%d %H:%M %Z')}; {cpu}, {command('nproc')} cores, "
            f"{int(command('awk', '/MemTotal/ {print $2}', '/proc/meminfo') or 0) // 1048576} GiB; "
            f"kernel {platform.release()}; libvips {command('pkg-config', '--modversion', 'vips')}; "
            f"{command('swift', '--version').splitlines()[0] if command('swift', '--version') != '?' else 'swift ?'}; "
            f"wrk and every server on the same machine, loopback only")


def ratio_text(ratio):
    return f"{ratio:.2f}x" if ratio else "-"


def mark(ok):
    return "met" if ok else "**missed**"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--peers", required=True)
    parser.add_argument("--scenarios", required=True)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rows, ceiling = median_rows(load(args.peers))
    scenarios = {record["scenario"]: record for record in load(args.scenarios)}
    lines = [f"Machine: {machine()}.", "",
             f"Peers harness (../shared/bench/peers.sh), median of {args.repeat} run(s) per cell; "
             f"libvips ceiling {ceiling if ceiling else '-'} thumbs/s.", "",
             "| server | scenario | conns | req/s (range) | p50 ms | p99 ms | peak RSS MB | x thumbor | x ceiling |",
             "|---|---|---|---|---|---|---|---|---|"]
    targets = []
    for (server, scenario, conc), row in sorted(rows.items(), key=lambda item: (item[0][1], item[0][2], item[0][0])):
        thumbor = rows.get(("thumbor", scenario, conc))
        versus = row["rps"] / thumbor["rps"] if thumbor and thumbor["rps"] else None
        to_ceiling = row["rps"] / ceiling if ceiling and scenario == "transform" else None
        lines.append(f"| {server} | {scenario} | {conc} | {row['rps']:.1f} ({row['spread'] or '-'}) | {row.get('p50_ms', 0):.1f} | "
                     f"{row.get('p99_ms', 0):.1f} | {row.get('peak_rss_mb') or 0:.0f} | "
                     f"{f'{versus:.2f}x' if versus else '-'} | {f'{to_ceiling:.2f}x' if to_ceiling else '-'} |")
        if server == "imageproxy" and scenario == "transform":
            targets.append((f"transform c{conc}: >= 1.5x thumbor", f"{versus:.2f}x" if versus else "-", versus is not None and versus >= 1.5))
            targets.append((f"transform c{conc}: >= 1.0x libvips ceiling", f"{to_ceiling:.2f}x" if to_ceiling else "-",
                            to_ceiling is not None and to_ceiling >= 1.0))
            if conc == 32:
                rss = row.get("peak_rss_mb") or 0
                targets.append(("peak RSS under transform c32 <= 250 MB", f"{rss:.0f} MB", rss <= 250))

    lines += ["", "ImageProxy's own scenarios (bench/scenarios.py):", ""]
    memory = scenarios.get("memory-hit")
    if memory and "rows" in memory:
        lines += [f"memory-hit: one {memory['bytes']} B thumbnail; ImageProxy with its defaults (access log on, to a file: "
                  f"{memory.get('log_lines', '?')} lines written in the last round's unsigned c8+c32 runs), signed URLs, and logging "
                  "off, run in turn for several rounds, each cell the median round; nginx serving the same bytes as a static file.", "",
                  "| conns | default req/s | p99 ms | signed req/s | p99 ms | log off req/s | p99 ms | nginx static req/s | p99 ms | default x nginx | CPU µs a hit, ours / nginx | CPU ratio |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for row in memory["rows"]:
            ours, nginx = row["ours"], row["nginx_static"]
            signed, off = row.get("signed", {}), row.get("log_off", {})
            lines.append(f"| {row['connections']} | {ours['rps']:.0f} | {ours.get('p99_ms', 0):.2f} | {signed.get('rps', 0):.0f} | "
                         f"{signed.get('p99_ms', 0):.2f} | {off.get('rps', 0):.0f} | {off.get('p99_ms', 0):.2f} | "
                         f"{nginx['rps']:.0f} | {nginx.get('p99_ms', 0):.2f} | {row['ratio']:.2f}x | "
                         f"{ours.get('cpu_us_per_request', '-')} / {nginx.get('cpu_us_per_request', '-')} | {ratio_text(row.get('cpu_ratio'))} |")
            conns = row["connections"]
            if row.get("cpu_ratio"):
                targets.append((f"memory-hit c{conns}: server CPU per hit <= nginx's (#60)", f"{row['cpu_ratio']:.2f}x",
                                row["cpu_ratio"] <= 1.0))
            if off.get("rps"):
                share = ours["rps"] / off["rps"]
                targets.append((f"memory-hit c{conns}: default access log within 10% of logging off",
                                f"{share:.2f}x ({ours['rps']:.0f} vs {off['rps']:.0f} req/s)", share >= 0.9))
            if signed.get("rps"):
                share = signed["rps"] / ours["rps"]
                targets.append((f"memory-hit c{conns}: signed within 10% of unsigned",
                                f"{share:.2f}x ({signed['rps']:.0f} vs {ours['rps']:.0f} req/s)", share >= 0.9))
            targets.append((f"memory-hit c{conns}: p99 no worse than nginx static",
                            f"{ours.get('p99_ms', 0):.2f} vs {nginx.get('p99_ms', 0):.2f} ms",
                            ours.get("p99_ms", 1e9) <= nginx.get("p99_ms", 0)))
        spread = memory.get("rounds_rps") or {}
        if spread:
            # Every round, not only the median: one server process may be ±12% off another.
            parts = [f"{label} c{conns} {min(runs):.0f}–{max(runs):.0f}"
                     for label, by_connections in spread.items() for conns, runs in by_connections.items() if runs]
            lines += ["", f"Rounds (req/s, slowest–fastest of {max(len(runs) for by in spread.values() for runs in by.values())}): "
                      + "; ".join(parts) + "."]
        lines.append("")
    classes = scenarios.get("transform-classes")
    if classes and "rows" in classes:
        lines += ["transform per source class: every request a new source, 300 px JPEG q80 out, 8 conns; ImageProxy with "
                  "its defaults and signed URLs, thumbor (2 processes, PIL).", "",
                  "| class | files | ImageProxy req/s | p99 ms | peak RSS MB | thumbor req/s | p99 ms | x thumbor |",
                  "|---|---|---|---|---|---|---|---|"]
        for row in classes["rows"]:
            ours, thumbor = row["ours"], row.get("thumbor", {})
            lines.append(f"| {row['class']} | {row['files']} | {ours['rps']:.1f} | {ours.get('p99_ms', 0):.0f} | "
                         f"{ours.get('peak_rss_mb') or 0:.0f} | {thumbor.get('rps', 0):.1f} | {thumbor.get('p99_ms', 0):.0f} | "
                         f"{ratio_text(row.get('ratio'))} |")
        lines.append("")
    disk = scenarios.get("disk-hit")
    if disk and "row" in disk:
        lines.append(f"- disk-hit: {disk['variants']} variants, 1 MiB memory tier, 8 conns: {disk['row']['rps']:.0f} req/s, "
                     f"p50 {disk['row'].get('p50_ms', 0):.2f} ms, p99 {disk['row'].get('p99_ms', 0):.2f} ms, "
                     f"{disk['disk_hits']:.0f} disk hits during the run, peak RSS {disk['peak_rss_mb']:.0f} MB")
    storm = scenarios.get("dedup-storm")
    if storm and "origin_gets" in storm:
        lines.append(f"- dedup-storm: {storm['clients']} concurrent clients, one uncached {storm.get('source_mb', '?')} MB source served at 1 MB/s: "
                     f"statuses {storm['statuses']}, {storm['distinct_sizes']} distinct body size(s), "
                     f"{storm['origin_gets']} origin GET(s), {storm['transforms']:.0f} transform(s), all answered in {storm['max_client_s']} s")
        targets.append(("dedup-storm: exactly one origin GET and one transform",
                        f"{storm['origin_gets']} GET, {storm['transforms']:.0f} transform", storm["origin_gets"] == 1 and storm["transforms"] == 1))
    mixed = scenarios.get("mixed")
    if mixed and "row" in mixed:
        lines.append(f"- mixed: {mixed['sources']} sources (Zipf 1.1) x srcset widths, 16 conns, {mixed['duration_s']} s: "
                     f"{mixed['row']['rps']:.1f} req/s, p50 {mixed['row'].get('p50_ms', 0):.1f} ms, p99 {mixed['row'].get('p99_ms', 0):.1f} ms, "
                     f"hit ratio {mixed['hit_ratio']}, RSS growth after warm-up {mixed['rss_growth_pct']}%, peak RSS {mixed['peak_rss_mb']:.0f} MB")
        growth = mixed.get("rss_growth_pct")
        budget = mixed.get("memory_tier_mb")
        if budget:
            targets.append((f"peak RSS in the {mixed['duration_s']} s mixed soak <= memory tier ({budget:.0f} MB) + 200 MB",
                            f"{mixed['peak_rss_mb']:.0f} MB", mixed["peak_rss_mb"] <= budget + 200))
        targets.append((f"no RSS growth beyond 10% over a {mixed['duration_s']} s mixed soak", f"{growth}%",
                        growth is not None and growth <= 10))
    over = scenarios.get("overload")
    if over and "accepted" in over:
        lines.append(f"- overload: {over['connections']} conns of new sources against queues of 4 waiting jobs: "
                     f"{over['accepted_rps']} accepted req/s, accepted p50 {over['accepted_p50_ms']} ms / p99 {over['accepted_p99_ms']} ms; "
                     f"{over['shed_share'] * 100:.0f}% shed with 503, their p99 {over['shed_p99_ms']} ms; other statuses {over['other']}")
    quality = scenarios.get("quality")
    if quality and "mean_ssim" in quality:
        ssim = quality["mean_ssim"]
        lines.append(f"- quality: mean SSIM (luma, Gaussian window) against a Lanczos3 downscale of the fully decoded source, "
                     f"width 300, JPEG q80: ImageProxy {ssim.get('ours')}, thumbor {ssim.get('thumbor', '-')}; per class: "
                     + ", ".join(f"{kind} {values.get('ours')} vs {values.get('thumbor', '-')}"
                                 for kind, values in quality.get("mean_ssim_by_class", {}).items()))
        jpeg = quality.get("mean_ssim_jpeg", {})
        if "thumbor" in jpeg:
            targets.append(("JPEG quality no worse than thumbor (mean SSIM over the corpus's JPEGs)",
                            f"{jpeg['ours']} vs {jpeg['thumbor']}", jpeg["ours"] >= jpeg["thumbor"]))
        if "thumbor" in ssim:
            targets.append(("transform quality no worse than thumbor (mean SSIM, every class)", f"{ssim['ours']} vs {ssim['thumbor']}",
                            ssim["ours"] >= ssim["thumbor"]))
    # srcset on every corpus it ran on (#60: >= 2x thumbor on any corpus), with SSIM per width.
    for srcset in load(args.scenarios):
        if srcset.get("scenario") != "srcset" or "ours" not in srcset:
            continue
        ours, corpus = srcset["ours"], srcset.get("corpus", "?")
        line = (f"- srcset ({corpus}): {srcset['sources']} sources x {len(srcset['widths'])} widths (Next.js' defaults, capped at "
                f"the source), random order, {srcset['connections']} conns, cold caches: {ours['requests']} requests, ImageProxy "
                f"{ours['rps']} req/s (peak RSS {ours['peak_rss_mb']:.0f} MB)")
        if "thumbor" in srcset:
            line += f", thumbor {srcset['thumbor']['rps']} req/s: {srcset['ratio']}x"
            targets.append((f"srcset ({corpus}): >= 2x thumbor's throughput", f"{srcset['ratio']}x", srcset["ratio"] >= 2))
        by_width = srcset.get("ssim_by_width") or {}
        if by_width:
            line += "; SSIM per width, ours / thumbor: " + ", ".join(
                f"{width} {values.get('ours', '-')} / {values.get('thumbor', '-')}" for width, values in by_width.items())
        lines.append(line)
    for record in load(args.scenarios):
        if record.get("scenario") != "floor" or "ratio" not in record:
            continue
        lines.append(f"- floor ({record['corpus']}, {record['files']} baseline JPEGs, 300 px, signed, one request at a time): "
                     f"server CPU per miss {record['miss_ms_mean']} ms, libjpeg's bare decode (djpeg -scale 1/N, whole "
                     f"process) {record['decode_ms_mean']} ms: {record['ratio']}x")
        targets.append((f"floor ({record['corpus']}): CPU per baseline miss <= 1.3x the bare decode", f"{record['ratio']}x",
                        record["ratio"] <= 1.3))
    trace = scenarios.get("tracing")
    if trace and "hits" in trace:
        miss = trace["miss_cpu_ms"]
        lines.append(f"- tracing (#61; off, on at ratio 1, on at 0.1, to a collector taking everything): server CPU a miss "
                     f"{miss['off']} / {miss['on']} / {miss['on_ratio_0.1']} ms; a memory hit "
                     + ", ".join(f"c{row['connections']} {row['off_cpu_us_per_hit']} / {row['on_cpu_us_per_hit']} / "
                                 f"{row['on_ratio_0.1_cpu_us_per_hit']} µs" for row in trace["hits"]))
        ratio = trace["miss_cpu_ratio"]["on"]
        targets.append(("tracing on (ratio 1): CPU a miss <= 1.03x off", f"{ratio}x", ratio is not None and ratio <= 1.03))
        for row in trace["hits"]:
            hit = row["on_hit_cpu_ratio"]
            targets.append((f"tracing on (ratio 1): CPU a hit <= 1.10x off, c{row['connections']}", f"{hit}x",
                            hit is not None and hit <= 1.10))
    for record in scenarios.values():
        if "error" in record:
            lines.append(f"- {record['scenario']}: failed: {record['error']}")
    lines += ["", "| target | measured | |", "|---|---|---|"]
    lines += [f"| {name} | {value} | {mark(ok)} |" for name, value, ok in targets]
    with open(args.out, "w") as file:
        file.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
