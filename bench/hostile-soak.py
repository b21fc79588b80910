#!/usr/bin/env python3
"""The crash-free soak of record (issue #29): ImageProxy's release binary at its defaults (access log on,
signed URLs) takes ordinary and hostile traffic through the real server for 10 minutes, every request a
new source URL (a miss: download, decode, encode), from 4 clients on loopback:

  ordinary  photos (baseline and progressive JPEG, PNG with alpha, WebP, an animated GIF) at many widths,
            in every output format, AVIF at large sizes (up to 2164 px) among them
  warning   JPEGs with damaged entropy-coded data (libjpeg warns, libvips logs, the answer is a 200)
  hostile   every file of fuzz/corpus/* and fuzz/regressions/*, and the hostile fixtures of the tests
            (thousands of scans behind stray bytes, fill bytes and restart markers; 154 valid scans; a PNG
            declaring 10^9 pixels)

It fails (exit 1) when the process dies, answers a 5xx other than 503/504, its CPU per request drifts
upward (the last two minutes above 1.5x the first two, per class mix), or its RSS passes the memory tier
(cache.memoryBytes, 256 MiB) + 200 MB. Figures go to stdout as JSON and to bench/results/.

  python3 bench/hostile-soak.py [--seconds 600] [--binary PATH] [--clients 4]

Needs nginx and the vips command line (libvips-tools); the binary defaults to this checkout's release build.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scenarios import release_binary, ORIGIN_PORT, OURS_PORT, Origin, Ours, get, rss_mb, sign, status_mb  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMORY_TIER_MB = 256
FORMATS = ["jpeg", "webp", "avif", "png", "gif", "auto"]


def log(message):
    print(f"[soak {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def vips(*arguments):
    subprocess.run(["vips", *arguments], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def many_valid_scans(bands):
    """A valid progressive 8x8 grey JPEG with 14 + 14 x bands scans (as Tests/ImageCoreTests/JPEGScanLimitTests)."""
    def segment(marker, body):
        return bytes([0xFF, marker]) + (len(body) + 2).to_bytes(2, "big") + bytes(body)

    def scan(first, last, high, low):
        return segment(0xDA, [1, 1, 0, first, last, high << 4 | low]) + b"\x7f"

    one_code = [1] + [0] * 15 + [0]
    out = b"\xff\xd8" + segment(0xDB, [0] + [1] * 64) + segment(0xC2, [8, 0, 8, 0, 8, 1, 1, 0x11, 0])
    out += segment(0xC4, [0x00] + one_code) + segment(0xC4, [0x10] + one_code)
    out += scan(0, 0, 0, 13) + b"".join(scan(0, 0, h, h - 1) for h in range(13, 0, -1))
    for band in range(1, bands + 1):
        out += scan(band, band, 0, 13) + b"".join(scan(band, band, h, h - 1) for h in range(13, 0, -1))
    return out + b"\xff\xd9"


def inserting(insert, data, every):
    """`data` with `insert` before its first SOS marker, or before every one."""
    out, done, index = bytearray(), False, 0
    while index < len(data):
        if data[index] == 0xFF and index + 1 < len(data) and data[index + 1] == 0xDA and (every or not done):
            out += insert
            done = True
        out.append(data[index])
        index += 1
    return bytes(out)


def build_corpus(folder):
    """Writes the soak's sources; returns {class: [file names]}."""
    os.makedirs(folder, exist_ok=True)
    work = tempfile.mkdtemp(prefix="soak-build-")
    noise = os.path.join(work, "noise.v")
    vips("gaussnoise", noise, "600", "400", "--mean", "128", "--sigma", "50")
    colour = os.path.join(work, "colour.v")
    vips("bandjoin", f"{noise} {noise} {noise}", colour)
    photo = os.path.join(work, "photo.v")
    vips("resize", colour, photo, "4")  # 2400x1600, smooth like a photograph
    classes = {"ordinary": [], "warning": [], "hostile": []}

    def add(kind, name, writer):
        writer(os.path.join(folder, name))
        classes[kind].append(name)

    add("ordinary", "baseline.jpg", lambda path: vips("copy", photo, path + "[Q=85,strip]"))
    add("ordinary", "progressive.jpg", lambda path: vips("copy", photo, path + "[Q=85,interlace,strip]"))
    add("ordinary", "photo.webp", lambda path: vips("copy", photo, path + "[Q=80]"))
    alpha = os.path.join(work, "alpha.v")
    vips("bandjoin_const", photo, alpha, "200")
    add("ordinary", "alpha.png", lambda path: vips("copy", alpha, path))
    frames = []
    for index in range(8):
        frame = os.path.join(work, f"frame-{index}.png")
        vips("crop", colour, frame, str(index * 50), str(index * 30), "150", "100")
        frames.append(frame)
    strip = os.path.join(work, "strip.png")
    vips("arrayjoin", " ".join(frames), strip, "--across", "1")
    add("ordinary", "animated.gif", lambda path: vips("gifsave", strip, path, "--page-height", str(100)))
    # Damaged entropy-coded data: libjpeg warns ("Corrupt JPEG data") and decodes the rest.
    with open(os.path.join(folder, "baseline.jpg"), "rb") as file:
        baseline = bytearray(file.read())
    for index, offset in enumerate([0.3, 0.5, 0.7]):
        damaged = bytearray(baseline)
        at = int(len(damaged) * offset)
        damaged[at:at + 2] = b"\xff\xd3"
        add("warning", f"warn-{index}.jpg", lambda path, data=damaged: open(path, "wb").write(data))
    # The fuzz corpora and regressions, whatever their format.
    for sub in ["corpus", "regressions"]:
        base = os.path.join(ROOT, "fuzz", sub)
        for target in sorted(os.listdir(base)):
            if target in ("raw_request_head", "request_intake"):
                continue  # request heads, not images
            for name in sorted(os.listdir(os.path.join(base, target))):
                source = os.path.join(base, target, name)
                add("hostile", f"fuzz-{sub}-{target}-{name}", lambda path, source=source: shutil.copyfile(source, path))
    # The tests' hostile fixtures.
    grey = os.path.join(work, "grey.jpg")
    vips("colourspace", photo, os.path.join(work, "grey.v"), "b-w")
    vips("copy", os.path.join(work, "grey.v"), grey + "[Q=85,interlace,strip]")
    with open(grey, "rb") as file:
        progressive = file.read()
    sos = progressive.index(b"\xff\xda")
    header = progressive[sos:sos + 2 + int.from_bytes(progressive[sos + 2:sos + 4], "big")]
    repeated = progressive[:sos] + header * 9000 + progressive[sos:]
    fixtures = {
        "scans-repeated.jpg": repeated,
        "scans-stray.jpg": inserting(b"\x00", repeated, every=False),
        "scans-restart.jpg": inserting(b"\xff\xd0", repeated, every=False),
        "scans-fill.jpg": inserting(b"\xff\xff\xff", repeated, every=True),
        "scans-valid-154.jpg": many_valid_scans(10),
    }
    png = b"\x89PNG\r\n\x1a\n" + bytes.fromhex("0000000d49484452") + (100000).to_bytes(4, "big") * 2
    png += bytes([8, 2, 0, 0, 0]) + b"\x00\x00\x00\x00"  # CRC left wrong: libpng decides
    fixtures["huge-declared.png"] = png
    for name, data in fixtures.items():
        add("hostile", name, lambda path, data=data: open(path, "wb").write(data))
    shutil.rmtree(work, ignore_errors=True)
    return classes


def process_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


class Soak:
    def __init__(self, args, classes, ours):
        self.args = args
        self.classes = classes
        self.ours = ours
        self.lock = threading.Lock()
        self.counter = 0
        self.statuses = {}
        self.bad = []
        self.requests = 0
        self.stop = threading.Event()

    def next_path(self, rng):
        with self.lock:
            self.counter += 1
            unique = self.counter
        roll = rng.random()
        kind = "ordinary" if roll < 0.6 else "warning" if roll < 0.8 else "hostile"
        name = rng.choice(self.classes[kind])
        if kind == "ordinary" and rng.random() < 0.15:
            width, fmt = rng.choice([1600, 1920, 2164]), "avif"
        else:
            width, fmt = rng.choice([64, 160, 320, 480, 640, 828, 1080, 1200, 1920]), rng.choice(FORMATS)
        source = f"http://127.0.0.1:{ORIGIN_PORT}/u/{unique}/{name}"
        path = f"/img?url={urllib.parse.quote(source, safe='')}&w={width}&format={fmt}"
        return kind, name, sign(path)

    def client(self, index):
        rng = random.Random(index)
        while not self.stop.is_set():
            kind, name, path = self.next_path(rng)
            try:
                status, body, _ = get(f"http://127.0.0.1:{OURS_PORT}{path}", timeout=60)
            except Exception as error:  # the connection failed: the process may be gone
                status, body = 0, str(error).encode()
            with self.lock:
                self.requests += 1
                self.statuses[status] = self.statuses.get(status, 0) + 1
                if status == 0 or (status >= 500 and status not in (503, 504)):
                    self.bad.append({"status": status, "kind": kind, "file": name, "body": body[:200].decode("utf-8", "replace")})

    def run(self):
        pid = self.ours.pid
        threads = [threading.Thread(target=self.client, args=(i,), daemon=True) for i in range(self.args.clients)]
        for thread in threads:
            thread.start()
        samples = []
        start = time.time()
        last_cpu, last_requests = process_cpu_seconds(pid), 0
        died = False
        while time.time() - start < self.args.seconds:
            time.sleep(self.args.interval)
            if self.ours.process.poll() is not None:
                died = True
                break
            cpu = process_cpu_seconds(pid)
            with self.lock:
                requests = self.requests
            sample = {
                "t": round(time.time() - start, 1), "rss_mb": rss_mb(pid), "requests": requests - last_requests,
                "cpu_s": round(cpu - last_cpu, 2),
            }
            sample["cpu_ms_per_request"] = round(1000 * sample["cpu_s"] / max(1, sample["requests"]), 2)
            samples.append(sample)
            log(f"{sample}")
            last_cpu, last_requests = cpu, requests
        self.stop.set()
        for thread in threads:
            thread.join(timeout=70)
        peak = status_mb(pid, "VmHWM")
        return samples, died, peak


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--interval", type=int, default=30)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--binary")
    args = parser.parse_args()
    binary = args.binary or release_binary()
    workdir = tempfile.mkdtemp(prefix="imageproxy-soak-")
    corpus = os.path.join(workdir, "corpus")
    classes = build_corpus(corpus)
    # nginx's workers run as another user: they must be able to read the corpus.
    for folder, _, files in os.walk(workdir):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    log(f"corpus: {', '.join(f'{k} {len(v)}' for k, v in classes.items())}")
    origin = Origin(corpus, workdir)
    ours = Ours(binary, workdir, signed=True)
    soak = Soak(args, classes, ours)
    try:
        samples, died, peak = soak.run()
    finally:
        alive = ours.process.poll() is None
        ours.stop()
        origin.stop()
    window = max(1, min(len(samples) // 3, 120 // args.interval))

    def per_request(part):
        return 1000 * sum(s["cpu_s"] for s in part) / max(1, sum(s["requests"] for s in part))

    result = {
        "scenario": "hostile-soak", "seconds": args.seconds, "clients": args.clients,
        "requests": soak.requests, "statuses": {str(k): v for k, v in sorted(soak.statuses.items())},
        "alive": alive and not died, "bad": soak.bad[:50],
        "cpu_ms_per_request_first": round(per_request(samples[:window]), 2),
        "cpu_ms_per_request_last": round(per_request(samples[-window:]), 2),
        "max_sampled_rss_mb": max((s["rss_mb"] or 0) for s in samples) if samples else None,
        "peak_rss_mb": peak, "rss_limit_mb": MEMORY_TIER_MB + 200,
        "corpus": {k: len(v) for k, v in classes.items()},
    }
    failures = []
    if not result["alive"]:
        failures.append("the process died")
    if result["bad"]:
        failures.append(f"{len(result['bad'])} answers were 5xx other than 503/504 or failed connections")
    if result["cpu_ms_per_request_last"] > 1.5 * result["cpu_ms_per_request_first"]:
        failures.append("CPU per request drifted upward")
    if (peak or 0) > MEMORY_TIER_MB + 200:
        failures.append(f"peak RSS {peak:.0f} MB above the memory tier + 200 MB")
    result["failures"] = failures
    result["samples"] = samples
    out = os.path.join(ROOT, "bench", "results", f"hostile-soak-{time.strftime('%Y%m%d-%H%M%S')}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as file:
        json.dump(result, file, indent=1)
    shutil.rmtree(workdir, ignore_errors=True)
    summary = {k: v for k, v in result.items() if k != "samples"}
    print(json.dumps(summary, indent=1))
    log(f"written {out}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
