#!/usr/bin/env python3
"""ImageProxy's own load scenarios, next to the shared peers harness (../shared/bench/peers.sh).

Run by bench/run.sh with the harness's vips-venv python (pyvips; numpy is added for SSIM). Every process
listens on 127.0.0.1 only. Writes one JSON object per scenario to --out (JSON lines):

ImageProxy runs as users run it: its default settings (access log on, written to a file), plus a signing
key where a row says "signed". The corpus is bench/corpus.sh's web-like mix (file names start with their
class: baseline-, progressive-, png-, webp-).

  memory-hit   one hot variant, ours (default access log; unsigned, signed, and logging off) vs nginx
               serving the same bytes as a static file (wrk, c8 and c32)
  transform-classes  new sources per request, per source class, ours (signed, defaults) vs thumbor (c8)
  disk-hit     a working set of 240 variants with a 1 MiB memory tier: every hit comes from disk
  dedup-storm  200 concurrent requests for one uncached, slowly served source: origin GETs and transforms
  mixed        Zipf-distributed sources and srcset widths; hit ratio and RSS, optionally a long soak
  overload     2x the concurrency the queues accept: accepted p99, share and latency of the fast 503s
  quality      SSIM of ours and thumbor against a careful reference downscale (no shrink-on-load, Lanczos3),
               per source class
  srcset       40 sources x Next.js' 8 default widths, random order, 16 connections, cold caches: ours vs thumbor
  floor        server CPU per baseline-JPEG miss (signed, one at a time) over libjpeg's bare decode of the same
               file (`djpeg -scale 1/N`, whole process, Pillow's draft scale); any corpus (baseline files are
               found by their SOF marker)
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ORIGIN_PORT = 18181
STATIC_PORT = 18182
OURS_PORT = 18190
THUMBOR_PORT = 18183
WIDTHS = [320, 480, 640, 960, 1280]
SIGNING_KEY = "bench-signing-key"
CLASSES = ["baseline", "progressive", "png", "webp"]


def log(message):
    print(f"[scenarios {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def release_binary():
    """This checkout's release build of ImageProxy, built first (the standalone bench scripts' default)."""
    root = os.path.dirname(HERE)
    subprocess.run(["swift", "build", "-c", "release", "--product", "ImageProxy"], cwd=root, check=True)
    folder = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=root, check=True,
                            capture_output=True, text=True).stdout.strip()
    return os.path.join(folder, "ImageProxy")


def wait_ready(url, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except Exception:
            time.sleep(0.2)
    raise RuntimeError(f"not ready: {url}")


def get(url, timeout=60):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)


def status_mb(pid, field):
    """A memory field of /proc/<pid>/status (VmRSS, VmHWM) in MB; None when the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def peak_rss_mb(pid):
    return status_mb(pid, "VmHWM")


def rss_mb(pid):
    return status_mb(pid, "VmRSS")


def nginx_preamble(folder, workers):
    """An nginx configuration's start, up to the `http` block's types: in the foreground, its pid, logs and
    temporary folders in `folder`, `workers` worker processes, no access log, long keep-alive."""
    return f"""
daemon off; master_process on; worker_processes {workers}; pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off; keepalive_requests 1000000; keepalive_timeout 120s;
  client_body_temp_path {folder}/body; proxy_temp_path {folder}/proxy; fastcgi_temp_path {folder}/fastcgi;
  uwsgi_temp_path {folder}/uwsgi; scgi_temp_path {folder}/scgi;"""


def cpu_model():
    """The CPU's model name (`lscpu`'s "Model name"), which every figure states."""
    with open("/proc/cpuinfo") as file:
        for line in file:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


class Origin:
    """nginx on loopback: the corpus under /u/<anything>/<file>, a slow copy under /slow/, an access log,
    and a second server for static files (the memory-hit comparison)."""

    def __init__(self, corpus, workdir):
        self.dir = os.path.join(workdir, "nginx")
        self.static = os.path.join(workdir, "static")
        os.makedirs(self.dir, exist_ok=True)
        os.makedirs(self.static, exist_ok=True)
        self.access_log = os.path.join(self.dir, "access.log")
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as file:
            file.write(nginx_preamble(self.dir, workers=1) + f"""
  types {{ image/jpeg jpg jpeg; image/png png; }}
  default_type application/octet-stream;
  sendfile on; tcp_nopush on;
  server {{
    listen 127.0.0.1:{ORIGIN_PORT};
    location ~ ^/slow/[^/]+/(?<f>[^/]+)$ {{ access_log {self.access_log}; limit_rate 1m; alias {corpus}/$f; }}
    location ~ ^/u/[^/]+/(?<f>[^/]+)$ {{ alias {corpus}/$f; }}
  }}
  server {{
    listen 127.0.0.1:{STATIC_PORT};
    location / {{ root {self.static}; }}
  }}
}}
""")
        self.process = subprocess.Popen(["nginx", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)

    def gets(self, needle):
        try:
            with open(self.access_log) as file:
                return sum(1 for line in file if needle in line and '"GET ' in line)
        except OSError:
            return 0

    def stop(self):
        self.process.send_signal(signal.SIGQUIT)
        self.process.wait(timeout=10)


class StaticNginx:
    """nginx as the hit path's yardstick (#60): 2 workers (one per core, as ours has 2 threads), access log off,
    serving `body` as /thumb.jpg from memory's page cache; a process tree of its own, so its CPU is only this."""
    PORT = 18183

    def __init__(self, workdir, body):
        self.dir = os.path.join(workdir, "nginx-static")
        os.makedirs(os.path.join(self.dir, "www"), exist_ok=True)
        with open(os.path.join(self.dir, "www", "thumb.jpg"), "wb") as file:
            file.write(body)
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as file:
            file.write(nginx_preamble(self.dir, workers=2) + f"""
  types {{ image/jpeg jpg; }}
  sendfile on; tcp_nopush on;
  server {{ listen 127.0.0.1:{self.PORT}; location / {{ root {self.dir}/www; }} }}
}}
""")
        self.process = subprocess.Popen(["nginx", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_ready(f"http://127.0.0.1:{self.PORT}/thumb.jpg")

    @property
    def pid(self):
        return self.process.pid

    def stop(self):
        self.process.send_signal(signal.SIGQUIT)
        self.process.wait(timeout=10)


class Ours:
    """The release binary with its default settings (access log on, to a file in the work folder), an
    environment per scenario and a fresh cache folder. signed=True configures a signing key."""

    count = 0

    def __init__(self, binary, workdir, signed=False, **settings):
        self.cache = tempfile.mkdtemp(prefix="cache-", dir=workdir)
        env = dict(os.environ)
        env.update({
            "IMAGEPROXY_BIND": f"127.0.0.1:{OURS_PORT}", "IMAGEPROXY_CACHE_DIR": self.cache,
            "IMAGEPROXY_ALLOW_LOOPBACK_SOURCES": "true",
        })
        if signed:
            env["IMAGEPROXY_SIGNING_KEY"] = SIGNING_KEY
        for key, value in settings.items():
            env["IMAGEPROXY_" + key] = str(value)
        Ours.count += 1
        self.log_path = os.path.join(workdir, f"imageproxy-{Ours.count}.log")
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=self.log)
        wait_ready(f"http://127.0.0.1:{OURS_PORT}/ready")

    def log_lines(self):
        try:
            with open(self.log_path, "rb") as file:
                return sum(1 for _ in file)
        except OSError:
            return 0

    @property
    def pid(self):
        return self.process.pid

    def metric(self, name, labels=None):
        _, body, _ = get(f"http://127.0.0.1:{OURS_PORT}/metrics")
        total = 0.0
        for line in body.decode().splitlines():
            if not line.startswith(name) or line.startswith("#"):
                continue
            series, value = line.rsplit(" ", 1)
            if series.split("{")[0] != name:
                continue
            if labels and not all(f'{key}="{val}"' in series for key, val in labels.items()):
                continue
            total += float(value)
        return total

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
        shutil.rmtree(self.cache, ignore_errors=True)


def image_url(source_path, width, signed=False):
    source = f"http://127.0.0.1:{ORIGIN_PORT}/{source_path}"
    path = f"/img?url={urllib.parse.quote(source, safe='')}&w={width}&format=jpeg"
    return sign(path) if signed else path


def sign(path):
    """The service's URL signature: base64url (no padding) of HMAC-SHA256 over the path and query."""
    code = hmac.new(SIGNING_KEY.encode(), path.encode(), hashlib.sha256).digest()
    return path + "&sig=" + base64.urlsafe_b64encode(code).decode().rstrip("=")


def tree_cpu_seconds(pid):
    """User + system CPU of a process and its children (nginx's master and workers) so far."""
    total = process_cpu_seconds(pid)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def wrk(url, connections, duration, paths_file=None, server_pid=None):
    """wrk on loopback; with paths_file each request takes the next path of the file. Returns a dict. With
    server_pid, also the server's CPU (user + system from /proc, its child processes included) per request,
    in microseconds."""
    script = os.path.join(HERE, "paths.lua")
    command = ["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency", "--timeout", "30s"]
    if paths_file:
        command += ["-s", script, url, "--", paths_file]
    else:
        command += ["-s", script, url]
    cpu_before = tree_cpu_seconds(server_pid) if server_pid else None
    output = subprocess.run(command, capture_output=True, text=True, timeout=duration + 120).stdout
    result = {"connections": connections}
    match = re.search(r"(\d+) requests in", output)
    if server_pid and match and int(match.group(1)) > 0:
        result["requests"] = int(match.group(1))
        result["cpu_us_per_request"] = round((tree_cpu_seconds(server_pid) - cpu_before) / int(match.group(1)) * 1e6, 2)
    match = re.search(r"Requests/sec:\s+([\d.]+)", output)
    result["rps"] = float(match.group(1)) if match else 0.0
    for label, key in (("50%", "p50_ms"), ("99%", "p99_ms")):
        match = re.search(rf"{re.escape(label)}\s+([\d.]+)(us|ms|s)", output)
        if match:
            value = float(match.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[match.group(2)]
            result[key] = round(value, 2)
    match = re.search(r"STATUS (\{.*\})", output)
    result["statuses"] = json.loads(match.group(1)) if match else {}
    return result


def write_paths(workdir, name, paths):
    path = os.path.join(workdir, name)
    with open(path, "w") as file:
        file.write("\n".join(paths) + "\n")
    return path


def jpegs(corpus):
    return sorted(name for name in os.listdir(corpus) if name.endswith(".jpg"))


def images(corpus):
    return sorted(name for name in os.listdir(corpus) if name.rsplit(".", 1)[-1] in ("jpg", "png", "webp"))


def source_class(name):
    """baseline, progressive, png or webp from the corpus file's name (bench/corpus.sh); other corpora by
    their contents."""
    prefix = name.split("-", 1)[0]
    if prefix in CLASSES:
        return prefix
    if name.endswith(".png"):
        return "png"
    if name.endswith(".webp"):
        return "webp"
    return "jpeg"


def start_thumbor(args, processes=2):
    """thumbor as the peers harness runs it (PIL engine, no storage, q80), or None when not installed."""
    thumbor_bin = os.path.join(args.peers_dir, "thumbor-venv", "bin", "thumbor")
    if not os.path.exists(thumbor_bin):
        return None
    conf = os.path.join(args.workdir, "thumbor.conf")
    with open(conf, "w") as file:
        file.write("ALLOW_UNSAFE_URL = True\nSECURITY_KEY = 'bench'\nLOADER = 'thumbor.loaders.http_loader'\n"
                   "STORAGE = 'thumbor.storages.no_storage'\nRESULT_STORAGE = None\nENGINE = 'thumbor.engines.pil'\n"
                   "QUALITY = 80\nAUTO_WEBP = False\nENGINE_THREADPOOL_SIZE = 0\n")
    process = subprocess.Popen([thumbor_bin, "-i", "127.0.0.1", "-p", str(THUMBOR_PORT), "-c", conf, "-l", "warning",
                                "--processes", str(processes)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    wait_ready(f"http://127.0.0.1:{THUMBOR_PORT}/healthcheck")
    return process


def stop_thumbor(process):
    if process:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)


def thumbor_path(source_path, width):
    return f"/unsafe/{width}x0/filters:format(jpeg)/127.0.0.1:{ORIGIN_PORT}/{source_path}"


# --- scenarios -------------------------------------------------------------------------------------

def memory_hit(args, origin, corpus):
    """One hot 300 px variant. Rows per connection count: ours with the default access log (unsigned and
    signed URLs), ours with logging off (log.level warning: the cost of the access log), nginx static (2
    workers, log off). Each cell also has the server's CPU per request (user + system from /proc over the
    run, all threads or worker processes), and each row ours' CPU per hit over nginx's (#60's measure: it
    holds on any machine, where request rates depend on how wrk and the servers share the cores).
    The three configurations run in turn, MEMORY_HIT_ROUNDS times (default 3), each round starting with
    the next one, each cell keeping its median round: a server process measured first or last in a
    sequence is not favoured, and the ratios
    between configurations are not one cell's noise."""
    hot = next((name for name in jpegs(corpus) if name.startswith("baseline-")), jpegs(corpus)[0])
    configurations = [("default", {}, False), ("signed", {}, True), ("log_off", {"LOG_LEVEL": "warning"}, False)]
    rounds = int(os.environ.get("MEMORY_HIT_ROUNDS", "3"))
    cells = {label: {connections: [] for connections in args.concs} for label, _, _ in configurations}
    results = {}
    body = b""
    for round_index in range(rounds):
        # Each round starts with the next configuration, so none is always first (or follows the same one).
        shift = round_index % len(configurations)
        for label, settings, signed in configurations[shift:] + configurations[:shift]:
            ours = Ours(args.binary, args.workdir, signed=signed, **settings)
            try:
                path = image_url(f"u/hot/{hot}", 300, signed=signed)
                status, body, _ = get(f"http://127.0.0.1:{OURS_PORT}{path}")
                assert status == 200, status
                lines_before = ours.log_lines()
                for connections in args.concs:
                    cells[label][connections].append(
                        wrk(f"http://127.0.0.1:{OURS_PORT}{path}", connections, args.duration, server_pid=ours.pid))
                results[label + "_log_lines"] = ours.log_lines() - lines_before
                results[label + "_peak_rss_mb"] = peak_rss_mb(ours.pid)
            finally:
                ours.stop()
    for label, by_connections in cells.items():
        results[label] = {connections: sorted(runs, key=lambda run: run["rps"])[len(runs) // 2]
                          for connections, runs in by_connections.items()}
    static = StaticNginx(args.workdir, body)
    rows = []
    try:
        for connections in args.concs:
            nginx = wrk(f"http://127.0.0.1:{StaticNginx.PORT}/thumb.jpg", connections, args.duration, server_pid=static.pid)
            mine = results["default"][connections]
            cpu_ratio = None
            if mine.get("cpu_us_per_request") and nginx.get("cpu_us_per_request"):
                cpu_ratio = round(mine["cpu_us_per_request"] / nginx["cpu_us_per_request"], 3)
            rows.append({"connections": connections, "ours": mine, "signed": results["signed"][connections],
                         "log_off": results["log_off"][connections], "nginx_static": nginx,
                         "ratio": round(mine["rps"] / nginx["rps"], 3) if nginx["rps"] else None, "cpu_ratio": cpu_ratio})
    finally:
        static.stop()
    rounds_rps = {label: {connections: [run["rps"] for run in runs] for connections, runs in by_connections.items()}
                  for label, by_connections in cells.items()}
    return {"scenario": "memory-hit", "source": hot, "bytes": len(body), "rows": rows, "rounds_rps": rounds_rps,
            "log_lines": results["default_log_lines"], "peak_rss_mb": results["default_peak_rss_mb"]}


def transform_classes(args, origin, corpus):
    """Every request a new source (a unique URL path), per source class: ours (defaults, signed URLs) and
    thumbor (2 processes, PIL, JPEG q80 output as ours), wrk at 8 connections."""
    thumbor = start_thumbor(args)
    rows = []
    try:
        for kind in args.classes:
            names = [name for name in images(corpus) if source_class(name) == kind]
            if not names:
                continue
            sources = [f"u/tc-{kind}-{index}/{names[index % len(names)]}" for index in range(20000)]
            ours = Ours(args.binary, args.workdir, signed=True)
            try:
                mine = wrk(f"http://127.0.0.1:{OURS_PORT}", 8, args.duration,
                           write_paths(args.workdir, f"tc-{kind}.txt", [image_url(source, 300, signed=True) for source in sources]))
                mine["peak_rss_mb"] = peak_rss_mb(ours.pid)
            finally:
                ours.stop()
            row = {"class": kind, "files": len(names), "ours": mine}
            if thumbor:
                row["thumbor"] = wrk(f"http://127.0.0.1:{THUMBOR_PORT}", 8, args.duration,
                                     write_paths(args.workdir, f"tc-{kind}-thumbor.txt",
                                                 [thumbor_path(f"u/tt-{kind}-{index}/{names[index % len(names)]}", 300)
                                                  for index in range(20000)]))
                row["ratio"] = round(mine["rps"] / row["thumbor"]["rps"], 3) if row["thumbor"]["rps"] else None
            rows.append(row)
    finally:
        stop_thumbor(thumbor)
    return {"scenario": "transform-classes", "connections": 8, "width": 300, "rows": rows}


def disk_hit(args, origin, corpus):
    ours = Ours(args.binary, args.workdir, CACHE_MEMORY_BYTES=1024 * 1024)
    try:
        paths = [image_url(f"u/disk/{name}", 200 + step * 10) for name in jpegs(corpus) for step in range(20)]
        for path in paths:
            status, _, _ = get(f"http://127.0.0.1:{OURS_PORT}{path}")
            assert status == 200, status
        time.sleep(2)  # the background disk writes land
        before = ours.metric("imageproxy_cache_lookups_total", {"tier": "disk", "result": "hit"})
        random.Random(7).shuffle(paths)
        result = wrk(f"http://127.0.0.1:{OURS_PORT}", 8, args.duration, write_paths(args.workdir, "disk.txt", paths))
        hits = ours.metric("imageproxy_cache_lookups_total", {"tier": "disk", "result": "hit"}) - before
        misses = ours.metric("imageproxy_cache_lookups_total", {"tier": "disk", "result": "miss"})
        return {"scenario": "disk-hit", "variants": len(paths), "memory_tier_bytes": 1048576, "row": result,
                "disk_hits": hits, "disk_misses_total": misses, "peak_rss_mb": peak_rss_mb(ours.pid)}
    finally:
        ours.stop()


def dedup_storm(args, origin, corpus):
    ours = Ours(args.binary, args.workdir)
    try:
        nonce = f"storm{int(time.time())}"
        largest = max(jpegs(corpus), key=lambda name: os.path.getsize(os.path.join(corpus, name)))
        path = image_url(f"slow/{nonce}/{largest}", 300)
        barrier = threading.Barrier(200)
        results = []
        lock = threading.Lock()

        def client():
            barrier.wait()
            started = time.time()
            status, body, _ = get(f"http://127.0.0.1:{OURS_PORT}{path}", timeout=120)
            with lock:
                results.append((status, len(body), time.time() - started))

        threads = [threading.Thread(target=client) for _ in range(200)]
        started = time.time()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        statuses = {}
        for status, _, _ in results:
            statuses[str(status)] = statuses.get(str(status), 0) + 1
        return {"scenario": "dedup-storm", "clients": 200, "source": largest,
                "source_mb": round(os.path.getsize(os.path.join(corpus, largest)) / 1e6, 1), "statuses": statuses,
                "distinct_sizes": len({size for _, size, _ in results}),
                "origin_gets": origin.gets(f"/slow/{nonce}/"),
                "transforms": ours.metric("imageproxy_transform_duration_seconds_count"),
                "wall_s": round(time.time() - started, 2),
                "max_client_s": round(max(seconds for _, _, seconds in results), 2)}
    finally:
        ours.stop()


def mixed(args, origin, corpus):
    ours = Ours(args.binary, args.workdir)
    try:
        rng = random.Random(11)
        names = images(corpus)
        sources = [f"u/page{index}/{names[index % len(names)]}" for index in range(args.mixed_sources)]
        weights = [1 / (rank + 1) ** 1.1 for rank in range(len(sources))]
        paths = [image_url(rng.choices(sources, weights)[0], rng.choice(WIDTHS)) for _ in range(20000)]
        samples = []
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                samples.append((time.time(), rss_mb(ours.pid)))
                stop.wait(5)

        sampler = threading.Thread(target=sample)
        sampler.start()
        result = wrk(f"http://127.0.0.1:{OURS_PORT}", 16, args.mixed_duration, write_paths(args.workdir, "mixed.txt", paths))
        stop.set()
        sampler.join()
        hits = sum(ours.metric("imageproxy_cache_lookups_total", {"tier": tier, "result": "hit"}) for tier in ("memory", "disk"))
        lookups = ours.metric("imageproxy_cache_lookups_total", {"tier": "memory"})
        rss = [value for _, value in samples if value]
        # Growth: the last fifth of the run against the first sample taken after the first fifth (warm caches).
        fifth = max(1, len(rss) // 5)
        warm, late = rss[fifth:2 * fifth] or rss, rss[-fifth:]
        growth = (max(late) / max(warm) - 1) * 100 if warm and late else None
        return {"scenario": "mixed", "sources": len(sources), "duration_s": args.mixed_duration, "row": result,
                "memory_tier_mb": round(ours.metric("imageproxy_cache_capacity_bytes", {"tier": "memory"}) / 1e6, 1),
                "hit_ratio": round(hits / lookups, 3) if lookups else None, "rss_mb_samples": rss,
                "rss_growth_pct": round(growth, 1) if growth is not None else None, "peak_rss_mb": peak_rss_mb(ours.pid)}
    finally:
        ours.stop()


def overload(args, origin, corpus):
    """Queues: 16 downloads + 4 waiting, 2 transforms + 4 waiting, so about 2 + 4 + what is downloading is
    accepted; 48 connections of impatient clients (100 ms pause after a 503) ask for new sources."""
    ours = Ours(args.binary, args.workdir, QUEUE_MAX_PENDING=4, FETCH_CONCURRENCY=8)
    try:
        names = jpegs(corpus)
        latencies = {"200": [], "503": [], "other": []}
        lock = threading.Lock()
        end = time.time() + args.duration
        counter = [0]

        def client(index):
            while time.time() < end:
                with lock:
                    counter[0] += 1
                    number = counter[0]
                path = image_url(f"u/over{index}-{number}/{names[number % len(names)]}", 300)
                started = time.time()
                status, _, _ = get(f"http://127.0.0.1:{OURS_PORT}{path}", timeout=120)
                elapsed = (time.time() - started) * 1000
                with lock:
                    latencies[str(status) if str(status) in latencies else "other"].append(elapsed)
                if status == 503:
                    time.sleep(0.1)

        threads = [threading.Thread(target=client, args=(index,)) for index in range(48)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        def percentile(values, share):
            values = sorted(values)
            return round(values[min(len(values) - 1, int(len(values) * share))], 1) if values else None

        total = sum(len(values) for values in latencies.values())
        return {"scenario": "overload", "connections": 48, "duration_s": args.duration,
                "accepted": len(latencies["200"]), "shed": len(latencies["503"]), "other": len(latencies["other"]),
                "shed_share": round(len(latencies["503"]) / total, 3) if total else None,
                "accepted_rps": round(len(latencies["200"]) / args.duration, 1),
                "accepted_p50_ms": percentile(latencies["200"], 0.5), "accepted_p99_ms": percentile(latencies["200"], 0.99),
                "shed_p99_ms": percentile(latencies["503"], 0.99), "peak_rss_mb": peak_rss_mb(ours.pid)}
    finally:
        ours.stop()


def luma(image):
    """The luma plane of a pyvips image (alpha flattened on white, as the service flattens a transparent source
    into JPEG: its `bg` default), as a float64 numpy array."""
    import numpy
    image = image.colourspace("srgb")
    if image.hasalpha():
        image = image.flatten(background=[255, 255, 255])
    y = image.colourspace("b-w")
    return numpy.ndarray(buffer=y.write_to_memory(), dtype=numpy.uint8, shape=[y.height, y.width, y.bands])[:, :, 0].astype(numpy.float64)


def ssim(a, b):
    """Gaussian-window SSIM (sigma 1.5) of two luma arrays, as Wang et al.; pyvips does the blurs."""
    import numpy
    import pyvips
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2

    def blur(array):
        image = pyvips.Image.new_from_memory(numpy.ascontiguousarray(array, dtype=numpy.float64).tobytes(),
                                             array.shape[1], array.shape[0], 1, "double")
        blurred = image.gaussblur(1.5, precision="float")
        return numpy.ndarray(buffer=blurred.cast("double").write_to_memory(), dtype=numpy.float64, shape=array.shape)

    mu_a, mu_b = blur(a), blur(b)
    var_a, var_b, cov = blur(a * a) - mu_a ** 2, blur(b * b) - mu_b ** 2, blur(a * b) - mu_a * mu_b
    index = ((2 * mu_a * mu_b + c1) * (2 * cov + c2)) / ((mu_a ** 2 + mu_b ** 2 + c1) * (var_a + var_b + c2))
    return float(index.mean())


def reference_ssim(reference_full, body):
    """SSIM of an encoded answer against the careful reference: the whole image decoded (no shrink-on-load),
    Lanczos3 in one step to the answer's size."""
    import pyvips
    image = pyvips.Image.new_from_buffer(body, "")
    reference = reference_full.resize(image.width / reference_full.width,
                                      vscale=image.height / reference_full.height, kernel="lanczos3")
    return ssim(luma(reference), luma(image))


def quality(args, origin, corpus):
    import pyvips
    thumbor = start_thumbor(args, processes=1)
    ours = Ours(args.binary, args.workdir)
    try:
        rows = []
        for name in images(corpus):
            reference_full = pyvips.Image.new_from_file(os.path.join(corpus, name)).autorot().copy_memory()
            row = {"source": name, "class": source_class(name)}
            outputs = {"ours": get(f"http://127.0.0.1:{OURS_PORT}{image_url('u/q/' + name, 300)}")[1]}
            if thumbor:
                outputs["thumbor"] = get(f"http://127.0.0.1:{THUMBOR_PORT}{thumbor_path('u/q/' + name, 300)}")[1]
            for server, body in outputs.items():
                row[server] = round(reference_ssim(reference_full, body), 4)
                row[server + "_bytes"] = len(body)
            rows.append(row)
        def mean(server, selected):
            return round(sum(row[server] for row in selected) / len(selected), 4) if selected else None

        servers = [server for server in ("ours", "thumbor") if server in rows[0]]
        summary = {server: mean(server, rows) for server in servers}
        jpeg_rows = [row for row in rows if row["source"].endswith(".jpg")]
        by_class = {kind: {server: mean(server, [row for row in rows if row["class"] == kind]) for server in servers}
                    for kind in sorted({row["class"] for row in rows})}
        return {"scenario": "quality", "width": 300, "mean_ssim": summary,
                "mean_ssim_jpeg": {server: mean(server, jpeg_rows) for server in servers},
                "mean_ssim_by_class": by_class, "rows": rows}
    finally:
        ours.stop()
        stop_thumbor(thumbor)


def jpeg_frame(path):
    """(progressive, width) from a JPEG's first SOF segment, walking the marker segments."""
    with open(path, "rb") as file:
        data = file.read(1 << 20)
    index = 2
    while index + 9 < len(data):
        if data[index] != 0xFF:
            index += 1
            continue
        marker = data[index + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
            index += 1 if marker == 0xFF else 2
            continue
        length = int.from_bytes(data[index + 2:index + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2, 0xC3):
            return marker == 0xC2, int.from_bytes(data[index + 7:index + 9], "big")
        index += 2 + length
    return None, None


def process_cpu_seconds(pid):
    """User + system CPU of a process so far (clock ticks of /proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def floor(args, origin, corpus):
    """CPU per baseline-JPEG miss as a multiple of libjpeg's bare decode (#34). Ours with its defaults
    (access log on) and signed URLs; every request a new source (a miss: download, decode, resize,
    encode, store), one at a time; the server's user + system CPU over the batch divided by the
    requests. The bare decode: `djpeg -scale 1/N` of the same file to /dev/null, whole process
    (children's CPU), N the largest DCT scale whose output is still at least 300 px wide (Pillow's draft
    rule, what thumbor decodes at). The figure is total server CPU over total decode CPU."""
    if not shutil.which("djpeg"):
        return {"scenario": "floor", "error": "djpeg not installed (libjpeg-turbo-progs)"}
    width, rounds = 300, int(os.environ.get("FLOOR_ROUNDS", "20"))
    names = [name for name in jpegs(corpus) if jpeg_frame(os.path.join(corpus, name))[0] is False]
    ours = Ours(args.binary, args.workdir, signed=True)
    rows = []
    try:
        status, _, _ = get(f"http://127.0.0.1:{OURS_PORT}{image_url('u/floor-warm/' + names[0], width, signed=True)}")
        assert status == 200, status
        for name in names:
            path = os.path.join(corpus, name)
            source_width = jpeg_frame(path)[1]
            scale = next(d for d in (8, 4, 2, 1) if -(-source_width // d) >= width)
            before = os.times()
            for _ in range(rounds):
                subprocess.run(["djpeg", "-scale", f"1/{scale}", "-outfile", os.devnull, path], check=True)
            after = os.times()
            decode = (after.children_user - before.children_user + after.children_system - before.children_system) / rounds
            start = process_cpu_seconds(ours.pid)
            for index in range(rounds):
                status, _, _ = get(f"http://127.0.0.1:{OURS_PORT}{image_url(f'u/floor-{index}/{name}', width, signed=True)}")
                assert status == 200, (name, status)
            miss = (process_cpu_seconds(ours.pid) - start) / rounds
            rows.append({"source": name, "width": source_width, "scale": f"1/{scale}", "decode_ms": round(decode * 1000, 2),
                         "miss_ms": round(miss * 1000, 2), "ratio": round(miss / decode, 2) if decode else None})
    finally:
        ours.stop()
    decode_total = sum(row["decode_ms"] for row in rows)
    miss_total = sum(row["miss_ms"] for row in rows)
    return {"scenario": "floor", "corpus": os.path.basename(os.path.normpath(corpus)), "files": len(rows),
            "width": width, "rounds": rounds, "decode_ms_mean": round(decode_total / len(rows), 2) if rows else None,
            "miss_ms_mean": round(miss_total / len(rows), 2) if rows else None,
            "ratio": round(miss_total / decode_total, 2) if decode_total else None, "rows": rows}


class NullCollector:
    """An OTLP/HTTP endpoint that takes every export and answers 200 at once (nginx, 1 worker, its own process
    tree): the cost measured is the service's own, spans made, batched, encoded and sent, none dropped."""
    PORT = 18184

    def __init__(self, workdir):
        self.dir = os.path.join(workdir, "null-collector")
        os.makedirs(self.dir, exist_ok=True)
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as file:
            file.write(nginx_preamble(self.dir, workers=1) + f"""
  client_max_body_size 64m; client_body_buffer_size 16m;
  server {{ listen 127.0.0.1:{self.PORT};
    location / {{ default_type application/x-protobuf; return 200 ""; }} }}
}}
""")
        self.process = subprocess.Popen(["nginx", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_ready(f"http://127.0.0.1:{self.PORT}/")

    def stop(self):
        self.process.send_signal(signal.SIGQUIT)
        self.process.wait(timeout=10)


def tracing(args, origin, corpus):
    """#61's cost of traces: the same release binary with tracing off (the default) and on at ratio 1 to a
    collector that takes everything (NullCollector), alternated TRACING_ROUNDS times (default 3), medians
    kept. Hits: one hot 300 px variant, wrk at each connection count, the server's CPU per hit. Misses:
    every request a new source (baseline JPEGs of the corpus, download, decode, resize, encode, store),
    one at a time, signed URLs, the server's CPU per miss."""
    collector = NullCollector(args.workdir)
    rounds = int(os.environ.get("TRACING_ROUNDS", "3"))
    misses_per_round = int(os.environ.get("TRACING_MISSES", "60"))
    hot = next((name for name in jpegs(corpus) if name.startswith("baseline-")), jpegs(corpus)[0])
    names = [name for name in jpegs(corpus) if jpeg_frame(os.path.join(corpus, name))[0] is False]
    configurations = [
        ("off", {}),
        ("on", {"TRACING_ENABLED": "true", "TRACING_ENDPOINT": f"http://127.0.0.1:{NullCollector.PORT}/v1/traces"}),
        ("on_ratio_0.1", {"TRACING_ENABLED": "true", "TRACING_SAMPLE_RATIO": "0.1",
                          "TRACING_ENDPOINT": f"http://127.0.0.1:{NullCollector.PORT}/v1/traces"}),
    ]
    hits = {label: {connections: [] for connections in args.concs} for label, _ in configurations}
    misses = {label: [] for label, _ in configurations}
    try:
        for round_index in range(rounds):
            shift = round_index % len(configurations)
            order = configurations[shift:] + configurations[:shift]
            for label, settings in order:
                ours = Ours(args.binary, args.workdir, signed=True, **settings)
                try:
                    start = process_cpu_seconds(ours.pid)
                    for index in range(misses_per_round):
                        name = names[index % len(names)]
                        path = image_url(f"u/trace-{label}-{round_index}-{index}/{name}", 300, signed=True)
                        status, _, _ = get(f"http://127.0.0.1:{OURS_PORT}{path}")
                        assert status == 200, (name, status)
                    misses[label].append((process_cpu_seconds(ours.pid) - start) / misses_per_round * 1000)
                    path = image_url(f"u/hot/{hot}", 300, signed=True)
                    status, _, _ = get(f"http://127.0.0.1:{OURS_PORT}{path}")
                    assert status == 200, status
                    for connections in args.concs:
                        hits[label][connections].append(
                            wrk(f"http://127.0.0.1:{OURS_PORT}{path}", connections, args.duration, server_pid=ours.pid))
                finally:
                    ours.stop()
    finally:
        collector.stop()

    def median(values):
        return sorted(values)[len(values) // 2]

    rows = []
    for connections in args.concs:
        row = {"connections": connections}
        for label, _ in configurations:
            row[label + "_cpu_us_per_hit"] = median([run["cpu_us_per_request"] for run in hits[label][connections]])
            row[label + "_rps"] = median([run["rps"] for run in hits[label][connections]])
            row[label + "_p99_ms"] = median([run.get("p99_ms", 0) for run in hits[label][connections]])
        off = row["off_cpu_us_per_hit"]
        for label, _ in configurations[1:]:
            row[label + "_hit_cpu_ratio"] = round(row[label + "_cpu_us_per_hit"] / off, 3) if off else None
        row["rounds_cpu_us"] = {label: [run["cpu_us_per_request"] for run in hits[label][connections]] for label in hits}
        rows.append(row)
    miss = {label: round(median(values), 3) for label, values in misses.items()}
    return {"scenario": "tracing", "source": hot, "misses_per_round": misses_per_round, "rounds": rounds,
            "miss_cpu_ms": miss, "miss_rounds_cpu_ms": {label: [round(value, 3) for value in values] for label, values in misses.items()},
            "miss_cpu_ratio": {label: round(miss[label] / miss["off"], 3) if miss["off"] else None for label, _ in configurations[1:]},
            "hits": rows}


SRCSET_WIDTHS = [640, 750, 828, 1080, 1200, 1920, 2048, 3840]  # Next.js' default deviceSizes


def run_list(base, paths, connections):
    """GETs every path once, `connections` at a time; (seconds, statuses)."""
    queue = list(paths)
    lock = threading.Lock()
    statuses = {}

    def client():
        while True:
            with lock:
                if not queue:
                    return
                path = queue.pop()
            status, _, _ = get(base + path, timeout=120)
            with lock:
                statuses[str(status)] = statuses.get(str(status), 0) + 1

    started = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - started, statuses


def srcset(args, origin, corpus):
    """A responsive page's load on a cold cache (#34): 40 sources, each asked for at Next.js' 8 default
    widths (capped at the source's width), in one random order, 16 connections at a time; ours with its
    defaults and signed URLs, thumbor (2 processes) with the same list. Throughput is requests over the
    wall time of the whole list."""
    import pyvips

    names = images(corpus)
    sources = [(f"u/ss-{index}/{names[index % len(names)]}", names[index % len(names)]) for index in range(40)]
    widths = {name: pyvips.Image.new_from_file(os.path.join(corpus, name)).width for name in set(names)}
    pairs = sorted({(path, min(width, widths[name])) for path, name in sources for width in SRCSET_WIDTHS})
    random.Random(7).shuffle(pairs)
    # Quality per width: the first source of each class, every width, after the timed run (ours answers
    # from its cache what the run made; thumbor makes them again), against the careful reference.
    sampled = {}
    for path, name in sources:
        sampled.setdefault(source_class(name), (path, name))
    sample = [(path, name, width) for path, name in sampled.values() for width in sorted({min(w, widths[name]) for w in SRCSET_WIDTHS})]
    bodies = {"ours": {}, "thumbor": {}}
    ours = Ours(args.binary, args.workdir, signed=True)
    try:
        cpu_before = process_cpu_seconds(ours.pid)
        seconds, statuses = run_list(f"http://127.0.0.1:{OURS_PORT}", [image_url(path, width, signed=True) for path, width in pairs], 16)
        result = {"ours": {"requests": len(pairs), "seconds": round(seconds, 2), "rps": round(len(pairs) / seconds, 2),
                           "cpu_seconds": round(process_cpu_seconds(ours.pid) - cpu_before, 2),
                           "statuses": statuses, "peak_rss_mb": peak_rss_mb(ours.pid)}}
        for path, name, width in sample:
            bodies["ours"][(name, width)] = get(f"http://127.0.0.1:{OURS_PORT}{image_url(path, width, signed=True)}")[1]
    finally:
        ours.stop()
    thumbor = start_thumbor(args)
    try:
        if thumbor:
            seconds, statuses = run_list(f"http://127.0.0.1:{THUMBOR_PORT}",
                                         [thumbor_path(path.replace("u/ss-", "u/st-"), width) for path, width in pairs], 16)
            result["thumbor"] = {"requests": len(pairs), "seconds": round(seconds, 2), "rps": round(len(pairs) / seconds, 2),
                                 "statuses": statuses}
            result["ratio"] = round(result["ours"]["rps"] / result["thumbor"]["rps"], 3)
            for path, name, width in sample:
                bodies["thumbor"][(name, width)] = get(f"http://127.0.0.1:{THUMBOR_PORT}{thumbor_path(path.replace('u/ss-', 'u/st-'), width)}")[1]
    finally:
        stop_thumbor(thumbor)
    rows = []
    for name in sorted({name for _, name, _ in sample}):
        reference_full = pyvips.Image.new_from_file(os.path.join(corpus, name)).autorot().copy_memory()
        for (sampled_name, width) in sorted(key for key in bodies["ours"] if key[0] == name):
            row = {"source": name, "width": width}
            for server in ("ours", "thumbor"):
                if (name, width) in bodies[server]:
                    row[server] = round(reference_ssim(reference_full, bodies[server][(name, width)]), 4)
            rows.append(row)
    by_width = {}
    for width in sorted({row["width"] for row in rows}):
        selected = [row for row in rows if row["width"] == width]
        by_width[width] = {server: round(sum(row[server] for row in selected) / len(selected), 4)
                           for server in ("ours", "thumbor") if all(server in row for row in selected)}
    result["ssim_by_width"] = by_width
    result["ssim_rows"] = rows
    return {"scenario": "srcset", "corpus": os.path.basename(os.path.normpath(corpus)), "sources": 40, "widths": SRCSET_WIDTHS,
            "connections": 16, **result}


SCENARIOS = {"memory-hit": memory_hit, "tracing": tracing, "transform-classes": transform_classes, "disk-hit": disk_hit, "dedup-storm": dedup_storm, "mixed": mixed,
             "overload": overload, "quality": quality, "floor": floor, "srcset": srcset}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--peers-dir", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--duration", type=int, default=15)
    parser.add_argument("--mixed-duration", type=int, default=60)
    parser.add_argument("--mixed-sources", type=int, default=20000)
    parser.add_argument("--concs", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    parser.add_argument("--classes", nargs="+", default=CLASSES, choices=CLASSES,
                        help="source classes for transform-classes (default: all)")
    args = parser.parse_args()
    args.workdir = tempfile.mkdtemp(prefix="imageproxy-scenarios-")
    os.chmod(args.workdir, 0o755)
    origin = Origin(os.path.abspath(args.corpus), args.workdir)
    try:
        with open(args.out, "a") as out:
            for name in args.scenarios:
                log(f"{name}")
                try:
                    result = SCENARIOS[name](args, origin, args.corpus)
                except Exception as error:  # one failing scenario still leaves the others' results
                    result = {"scenario": name, "error": repr(error)}
                log(json.dumps(result)[:400])
                out.write(json.dumps(result) + "\n")
                out.flush()
    finally:
        origin.stop()
        shutil.rmtree(args.workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
