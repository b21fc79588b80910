#!/usr/bin/env python3
"""What faces and SVG sources cost (issue #62): server CPU per request and peak RSS, the release binary at its
defaults (access log on) with signed URLs and `image.allowSVGInput` on, one request at a time, every request a
new source (a miss: download, header, search or draw, resize, encode, store).

  python3 bench/faces-svg.py BINARY [--rounds N]

Rows (each the mean of N requests; CPU is the server's user + system time from /proc over the batch):
  - g=face against g=centre on the same 400x400 cover of a portrait (512, 1024 and 2048 px sources: the
    astronaut of Tests/Photographs, enlarged): the difference is the face search;
  - filter=redact_faces (blur and pixelate) against no filter at 800 px: the search on the output and the
    redaction;
  - a srcset with g=face (4 widths of one new source): the search runs once, so the widths after the first
    cost what g=centre costs;
  - SVG: a logo drawn at 64 and 1200 px, an illustration (2000 paths, gradients, a blurred shadow) at 1200 px.
Peak RSS (VmHWM) is read before and after the face rows. Prints JSON (with the CPU model) and writes it to
bench/results/faces-svg-<time>.json. Everything listens on 127.0.0.1 only.
"""
import argparse
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from scenarios import SIGNING_KEY, cpu_model, process_cpu_seconds, sign, status_mb, wait_ready  # noqa: E402


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {".jpg": "image/jpeg", ".svg": "image/svg+xml", "": "application/octet-stream"}

    def log_message(self, *arguments):
        pass


def make_sources(folder):
    """The portrait at 512, 1024 and 2048 px, a logo and an illustration in SVG."""
    portrait = os.path.join(ROOT, "Tests", "Photographs", "astronaut.jpg")
    shutil.copy(portrait, os.path.join(folder, "portrait-512.jpg"))
    for side in (1024, 2048):
        subprocess.run(["vips", "resize", portrait, os.path.join(folder, f"portrait-{side}.jpg[Q=85]"), str(side / 512)],
                       check=True)
    with open(os.path.join(folder, "logo.svg"), "w") as file:
        file.write('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 60"><rect width="120" height="60" rx="12" '
                   'fill="#1d4ed8"/><circle cx="90" cy="30" r="20" fill="#fff"/><text x="10" y="38" font-size="20" '
                   'fill="#fff" font-family="DejaVu Sans">Logo</text></svg>')
    paths = "".join(f'<path d="M{(i * 37) % 1000} {(i * 53) % 700} q 40 -60 80 0 t 80 0" stroke="hsl({i % 360},70%,50%)" '
                    f'stroke-width="3" fill="none"/>' for i in range(2000))
    with open(os.path.join(folder, "illustration.svg"), "w") as file:
        file.write('<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="700"><defs><linearGradient id="g">'
                   '<stop offset="0" stop-color="#fde68a"/><stop offset="1" stop-color="#60a5fa"/></linearGradient>'
                   '<filter id="s"><feGaussianBlur stdDeviation="6"/></filter></defs>'
                   '<rect width="1000" height="700" fill="url(#g)"/><circle cx="500" cy="380" r="200" fill="#000" '
                   f'opacity="0.3" filter="url(#s)"/>{paths}</svg>')


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="imageproxy-faces-svg-")
    sources = os.path.join(work, "sources")
    os.makedirs(sources)
    make_sources(sources)
    origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: Handler(*a, directory=sources))
    threading.Thread(target=origin.serve_forever, daemon=True).start()
    origin_base = f"http://127.0.0.1:{origin.server_address[1]}"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, IMAGEPROXY_BIND=f"127.0.0.1:{port}", IMAGEPROXY_CACHE_DIR=os.path.join(work, "cache"),
               IMAGEPROXY_ALLOW_LOOPBACK_SOURCES="true", IMAGEPROXY_SIGNING_KEY=SIGNING_KEY, IMAGEPROXY_IMAGE_ALLOW_SVG_INPUT="true")
    log = open(os.path.join(work, "imageproxy.log"), "ab")
    server = subprocess.Popen([args.binary], env=env, stdout=subprocess.DEVNULL, stderr=log)
    counter = [0]

    def fetch(name, query):
        counter[0] += 1
        source = urllib.parse.quote(f"{origin_base}/{name}?n={counter[0]}", safe="")
        url = f"http://127.0.0.1:{port}" + sign(f"/img?url={source}&{query}")
        with urllib.request.urlopen(url, timeout=60) as answer:
            assert answer.status == 200, (name, query, answer.status)
            return answer.read()

    def batch(name, query, rounds=None):
        rounds = rounds or args.rounds
        start = process_cpu_seconds(server.pid)
        for _ in range(rounds):
            fetch(name, query)
        return round((process_cpu_seconds(server.pid) - start) / rounds * 1000, 1)

    try:
        wait_ready(f"http://127.0.0.1:{port}/ready")
        fetch("portrait-512.jpg", "w=300&g=face&h=300&fit=cover")  # warm-up: cascade loaded, pools started
        rss_before = status_mb(server.pid, "VmHWM")
        rows = []
        for side in (512, 1024, 2048):
            name = f"portrait-{side}.jpg"
            centre = batch(name, "w=400&h=400&fit=cover&g=centre&format=jpeg")
            face = batch(name, "w=400&h=400&fit=cover&g=face&format=jpeg")
            rows.append({"row": f"g=face, {side} px portrait", "cpu_ms": face, "baseline": "g=centre", "baseline_cpu_ms": centre,
                         "search_cpu_ms": round(face - centre, 1)})
        plain = batch("portrait-2048.jpg", "w=800&format=jpeg")
        for style in ("blur", "pixelate"):
            redacted = batch("portrait-2048.jpg", f"w=800&format=jpeg&filter=redact_faces:{style}")
            rows.append({"row": f"redact_faces:{style}, 800 px of a 2048 px portrait", "cpu_ms": redacted, "baseline": "no filter",
                         "baseline_cpu_ms": plain, "search_cpu_ms": round(redacted - plain, 1)})
        # A srcset with g=face: four widths of one new source; the search runs for the first only.
        start = process_cpu_seconds(server.pid)
        for index in range(args.rounds):
            source = urllib.parse.quote(f"{origin_base}/portrait-1024.jpg?srcset={index}", safe="")
            for width in (320, 640, 800, 1000):
                path = sign(f"/img?url={source}&w={width}&h={width // 2}&fit=cover&g=face&format=jpeg")
                urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60).read()
        srcset = round((process_cpu_seconds(server.pid) - start) / args.rounds * 1000, 1)
        rows.append({"row": "srcset of 4 widths with g=face, 1024 px portrait (per source)", "cpu_ms": srcset})
        rss_after = status_mb(server.pid, "VmHWM")
        for name, query in (("logo.svg", "w=64&format=png"), ("logo.svg", "w=1200&format=png"),
                            ("logo.svg", "w=1200&format=webp"), ("illustration.svg", "w=1200&format=webp")):
            rows.append({"row": f"SVG {name} {query}", "cpu_ms": batch(name, query)})
        result = {"benchmark": "faces-svg", "date": time.strftime("%Y-%m-%d"), "cpu": cpu_model(), "cores": os.cpu_count(),
                  "binary": args.binary, "rounds": args.rounds, "signed": True, "rows": rows,
                  "peak_rss_mb_before_faces": rss_before, "peak_rss_mb_after_faces": rss_after}
    finally:
        server.terminate()
        server.wait(timeout=20)
        origin.shutdown()
        log.close()
        shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(result, indent=2)
    print(text)
    out = os.path.join(HERE, "results", f"faces-svg-{time.strftime('%Y%m%d-%H%M%S')}.json")
    with open(out, "w") as file:
        file.write(text + "\n")
    print(f"written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
