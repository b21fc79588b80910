#!/usr/bin/env python3
"""Two ImageProxy binaries asked the same variants of a corpus: are the answers the same bytes?

For a change meant to move code without changing what it makes (a before/after of bench/run.sh --quick), each
binary is started in turn with its defaults (a fresh cache folder, loopback sources allowed) and asked every
corpus file at the srcset widths and a cover box, as JPEG, WebP and the format negotiation picks; the SHA-256
of each answer is compared. Exits 1 when any differs, and lists them.

  python3 bench/same-bytes.py BEFORE_BINARY AFTER_BINARY [CORPUS_DIR]

The corpus defaults to bench/corpus.sh's web-like mix. Everything listens on 127.0.0.1 only.
"""
import functools
import hashlib
import http.server
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

QUERIES = ["w=320", "w=640", "w=1280", "w=300&h=300&fit=cover", "w=640&format=webp", "w=480&format=png",
           "w=300&h=200&fit=cover&g=west", "w=400&filter=blur:2"]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *arguments):
        pass


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(binary, origin_port, files, work):
    port = free_port()
    cache = tempfile.mkdtemp(dir=work)
    env = dict(os.environ, IMAGEPROXY_BIND=f"127.0.0.1:{port}", IMAGEPROXY_CACHE_DIR=cache,
               IMAGEPROXY_ALLOW_LOOPBACK_SOURCES="true")
    process = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        digests = {}
        for name in files:
            source = urllib.parse.quote(f"http://127.0.0.1:{origin_port}/{name}", safe="")
            for query in QUERIES:
                url = f"http://127.0.0.1:{port}/img?url={source}&{query}"
                request = urllib.request.Request(url, headers={"Accept": "image/webp,image/*"})
                try:
                    with urllib.request.urlopen(request, timeout=120) as response:
                        digests[(name, query)] = (response.status, hashlib.sha256(response.read()).hexdigest())
                except urllib.error.HTTPError as error:
                    digests[(name, query)] = (error.code, "")
        return digests
    finally:
        process.terminate()
        process.wait(timeout=20)


def main():
    before, after = sys.argv[1], sys.argv[2]
    corpus = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.environ.get("PEERS_DIR", "/tmp/imageproxy-peers"), "corpus-web")
    files = sorted(name for name in os.listdir(corpus) if not name.startswith("."))
    work = tempfile.mkdtemp(prefix="same-bytes-")
    handler = functools.partial(QuietHandler, directory=corpus)
    origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=origin.serve_forever, daemon=True).start()
    try:
        first = answers(before, origin.server_port, files, work)
        second = answers(after, origin.server_port, files, work)
    finally:
        origin.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    differing = [key for key in first if first[key] != second.get(key)]
    print(f"same-bytes: {len(first) - len(differing)} of {len(first)} answers identical "
          f"({len(files)} files x {len(QUERIES)} variants; statuses {sorted(set(s for s, _ in first.values()))})")
    for name, query in differing:
        print(f"same-bytes: DIFFERS {name} {query}: {first[(name, query)][0]} vs {second[(name, query)][0]}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
