"""Runs inside a network namespace that has loopback only (`unshare -rn`): starts the ImageProxy
binary with loopback sources allowed and asks it for sources on every refused address class, given as
literals and as redirect targets from an allowed (loopback) origin. Even if the policy were wrong, no
packet could leave the namespace. Prints one JSON object: {case: [status, seconds]}.

Usage: python3 ssrf_in_namespace.py /path/to/ImageProxy /path/to/cache-dir
"""
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

binary, cache = sys.argv[1], sys.argv[2]
subprocess.run(["ip", "link", "set", "lo", "up"], check=False)

TARGETS = {
    "private-10": "http://10.0.0.1/a.jpg",
    "private-172": "http://172.16.5.4/a.jpg",
    "private-192": "http://192.168.1.1/a.jpg",
    "link-local-metadata": "http://169.254.169.254/latest/meta-data/",
    "cgnat": "http://100.64.0.1/a.jpg",
    "multicast": "http://224.0.0.1/a.jpg",
    "reserved": "http://240.0.0.1/a.jpg",
    "unique-local-v6": "http://[fd00::1]/a.jpg",
    "link-local-v6": "http://[fe80::1]/a.jpg",
    "mapped-v6-private": "http://[::ffff:10.0.0.1]/a.jpg",
    "nat64": "http://[64:ff9b::a00:1]/a.jpg",
    "6to4": "http://[2002:a00:1::]/a.jpg",
}


class Redirector(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        target = TARGETS.get(self.path.strip("/"))
        self.send_response(302 if target else 404)
        if target:
            self.send_header("Location", target)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirector)
threading.Thread(target=origin.serve_forever, daemon=True).start()

probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()
env = dict(os.environ, IMAGEPROXY_BIND=f"127.0.0.1:{port}", IMAGEPROXY_CACHE_DIR=cache,
           IMAGEPROXY_ALLOW_LOOPBACK_SOURCES="true", IMAGEPROXY_LOG_LEVEL="error",
           IMAGEPROXY_FETCH_CONNECT_TIMEOUT_MS="3000", IMAGEPROXY_FETCH_RETRIES="0")
service = subprocess.Popen([binary], env=env, cwd=cache, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def get(path):
    started = time.monotonic()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
            status = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    except Exception:
        status = 0
    return [status, round(time.monotonic() - started, 3)]


try:
    for _ in range(100):
        if get("/ready")[0] == 200:
            break
        time.sleep(0.1)
    results = {}
    for name, url in TARGETS.items():
        results["literal:" + name] = get("/img?url=" + urllib.parse.quote(url, safe=""))
        redirect = f"http://127.0.0.1:{origin.server_address[1]}/{name}"
        results["redirect:" + name] = get("/img?url=" + urllib.parse.quote(redirect, safe=""))
    print(json.dumps(results))
finally:
    service.terminate()
    service.wait(timeout=10)
    origin.shutdown()
