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

With --attack (issue #56) it runs the expensive-output attack instead: one ordinary client (photos at
srcset widths) alone for a third of the time, then beside attacker clients asking a 4096x4096 noisy JPEG
for the costliest outputs (AVIF and WebP at 4096 px, JPEG XL at 2048 px, unreachable max_bytes), each with
a fresh q so that nothing is shared, then the attacker alone (one client, to measure CPU per expensive
request). It fails when the ordinary client's p99 with the attack passes 2x its p99 without, the ordinary
client gets a 5xx, an expensive request costs more server CPU than image.maxTransformCpuMs (5000 ms), the
process dies, or its RSS passes the memory tier + 200 MB.

Without --attack it fails (exit 1) when the process dies, answers a 5xx other than 503/504, its CPU per request drifts
upward (the last two minutes above 1.5x the first two, per class mix), or its RSS passes the memory tier
(cache.memoryBytes, 256 MiB) + 200 MB. Figures go to stdout as JSON and to bench/results/.

  python3 bench/hostile-soak.py [--seconds 600] [--binary PATH] [--clients 4] [--attack]

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
from scenarios import release_binary, ORIGIN_PORT, OURS_PORT, Origin, Ours, cpu_model, get, rss_mb, sign, status_mb  # noqa: E402

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


ATTACK_QUERIES = [
    "w=4096&format=avif", "w=4096&format=avif&max_bytes=1024", "w=4096&format=webp&max_bytes=1024",
    "w=2048&format=jxl&max_bytes=1024", "w=4096&format=jpeg&max_bytes=1024", "w=4096&format=webp", "w=4096&format=png",
]
CPU_BUDGET_MS = 5000


def finish(name, result, workdir):
    """Writes `result` to bench/results/<name>-<time>.json, prints it (without its samples), removes the work
    folder and exits 1 when it records failures."""
    out = os.path.join(ROOT, "bench", "results", f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as file:
        json.dump(result, file, indent=1)
    shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps({k: v for k, v in result.items() if k != "samples"}, indent=1))
    log(f"written {out}")
    sys.exit(1 if result["failures"] else 0)


def timed_get(path):
    """GET of one path on ImageProxy: its status (0 when the connection failed) and its seconds."""
    started = time.time()
    try:
        status, _, _ = get(f"http://127.0.0.1:{OURS_PORT}{path}", timeout=60)
    except Exception:
        status = 0
    return status, time.time() - started


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else None


class Attack:
    """The expensive-output attack beside ordinary traffic (--attack)."""

    def __init__(self, args, classes, ours):
        self.args, self.classes, self.ours = args, classes, ours
        self.lock = threading.Lock()
        self.counter = 0
        self.stop_attack = threading.Event()
        self.stop_ordinary = threading.Event()
        self.ordinary = []  # (phase, seconds, status)
        self.attacks = []  # (phase, query, seconds, status)
        self.phase = "alone"

    def unique(self):
        with self.lock:
            self.counter += 1
            return self.counter

    def ordinary_client(self):
        rng = random.Random(7)
        while not self.stop_ordinary.is_set():
            name = rng.choice(self.classes["ordinary"])
            width, fmt = rng.choice([320, 480, 640, 828, 1080]), rng.choice(["jpeg", "webp", "auto"])
            source = f"http://127.0.0.1:{ORIGIN_PORT}/u/{self.unique()}/{name}"
            status, seconds = timed_get(sign(f"/img?url={urllib.parse.quote(source, safe='')}&w={width}&format={fmt}"))
            with self.lock:
                self.ordinary.append((self.phase, seconds, status))

    def attacker(self, index):
        rng = random.Random(100 + index)
        while not self.stop_attack.is_set():
            query = rng.choice(ATTACK_QUERIES)
            # The attacker's own host name (the origin's other loopback spelling): its transforms are another
            # source host's than the ordinary client's, as an attacker's URLs would be.
            source = f"http://localhost:{ORIGIN_PORT}/u/big{self.unique() % 4}/attack.jpg"
            status, seconds = timed_get(sign(f"/img?url={urllib.parse.quote(source, safe='')}&{query}&q={rng.randint(2, 99)}"))
            with self.lock:
                self.attacks.append((self.phase, query, seconds, status))

    def run(self):
        pid = self.ours.pid
        third = max(10, self.args.seconds // 3)
        ordinary = threading.Thread(target=self.ordinary_client, daemon=True)
        ordinary.start()
        log("ordinary client alone")
        time.sleep(third)
        self.phase = "attacked"
        log("attack beside it")
        attackers = [threading.Thread(target=self.attacker, args=(i,), daemon=True) for i in range(self.args.clients)]
        for thread in attackers:
            thread.start()
        time.sleep(third)
        self.stop_attack.set()
        self.stop_ordinary.set()
        for thread in attackers + [ordinary]:
            thread.join(timeout=70)
        # The attacker alone, one request at a time, for the CPU each expensive request costs.
        self.phase = "measured"
        self.stop_attack.clear()
        log("attacker alone, measured")
        cpu_before = process_cpu_seconds(pid)
        count_before = len(self.attacks)
        alone = threading.Thread(target=self.attacker, args=(99,), daemon=True)
        alone.start()
        time.sleep(third)
        self.stop_attack.set()
        alone.join(timeout=70)
        cpu = process_cpu_seconds(pid) - cpu_before
        measured = max(1, len(self.attacks) - count_before)
        return 1000 * cpu / measured, status_mb(pid, "VmHWM")


def run_attack(args, binary):
    workdir = tempfile.mkdtemp(prefix="imageproxy-attack-")
    corpus = os.path.join(workdir, "corpus")
    classes = build_corpus(corpus)
    # The attacker's source: a 4096x4096 noisy JPEG (about 12 MB, as in issue #56), under four paths.
    big = os.path.join(workdir, "big.v")
    vips("gaussnoise", big, "4096", "4096", "--mean", "128", "--sigma", "60")
    colour = os.path.join(workdir, "big-colour.v")
    vips("bandjoin", f"{big} {big} {big}", colour)
    vips("copy", colour, os.path.join(corpus, "attack.jpg") + "[Q=92,strip]")
    for folder, _, files in os.walk(workdir):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    origin = Origin(corpus, workdir)
    ours = Ours(binary, workdir, signed=True)
    attack = Attack(args, classes, ours)
    try:
        cpu_per_expensive_ms, peak = attack.run()
    finally:
        alive = ours.process.poll() is None
        ours.stop()
        origin.stop()
    alone = [t for phase, t, _ in attack.ordinary if phase == "alone"]
    attacked = [t for phase, t, _ in attack.ordinary if phase == "attacked"]
    ordinary_5xx = sum(1 for _, _, status in attack.ordinary if status == 0 or status >= 500)
    by_query = {}
    for phase, query, seconds, status in attack.attacks:
        entry = by_query.setdefault(query, {})
        entry[str(status)] = entry.get(str(status), 0) + 1
    result = {
        "scenario": "hostile-soak-attack", "cpu_model": cpu_model(), "seconds": args.seconds, "attackers": args.clients,
        "ordinary_requests": {"alone": len(alone), "attacked": len(attacked)},
        "ordinary_p99_ms": {"alone": round(1000 * (percentile(alone, 0.99) or 0), 1),
                            "attacked": round(1000 * (percentile(attacked, 0.99) or 0), 1)},
        "ordinary_5xx": ordinary_5xx, "attack_statuses": by_query,
        "cpu_ms_per_expensive_request": round(cpu_per_expensive_ms, 1), "cpu_budget_ms": CPU_BUDGET_MS,
        "peak_rss_mb": peak, "rss_limit_mb": MEMORY_TIER_MB + 200, "alive": alive,
    }
    failures = []
    if not alive:
        failures.append("the process died")
    if ordinary_5xx:
        failures.append(f"{ordinary_5xx} ordinary requests got a 5xx or no answer")
    if result["ordinary_p99_ms"]["attacked"] > 2 * result["ordinary_p99_ms"]["alone"]:
        failures.append("the ordinary p99 with the attack is more than twice its p99 without")
    if cpu_per_expensive_ms > CPU_BUDGET_MS:
        failures.append("an expensive request costs more CPU than the per-request budget")
    if (peak or 0) > MEMORY_TIER_MB + 200:
        failures.append(f"peak RSS {peak:.0f} MB above the memory tier + 200 MB")
    result["failures"] = failures
    finish("hostile-soak-attack", result, workdir)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--interval", type=int, default=30)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--binary")
    parser.add_argument("--attack", action="store_true", help="the expensive-output attack beside ordinary traffic")
    args = parser.parse_args()
    binary = args.binary or release_binary()
    if args.attack:
        return run_attack(args, binary)
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
    finish("hostile-soak", result, workdir)


if __name__ == "__main__":
    main()
