"""imgproxy URLs against imgproxy's documented rules: the Go server is not installable here, so the oracle is a
table of URLs, built with the PyPI `imgproxy` package (its own signing) and by hand (imgproxy's documented
signing), each with the answer imgproxy's documentation and its sizing rules (processing/prepare.go) give.

Run by scripts/check-dialects.sh inside a loopback-only network namespace. ImageProxy is started with
imgproxy's own IMGPROXY_KEY and IMGPROXY_SALT, so an imgproxy deployment's secrets are shown to work as they are.
"""
import base64
import hashlib
import hmac
import io
import os
import random
import shutil
import sys
import tempfile

from imgproxy import ImgProxy
from PIL import Image

from harness import Servers, fetch, make_sources

KEY = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
SALT = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"


def signed(path):
    """imgproxy's documented signing: URL-safe base64 (no padding) of HMAC-SHA256(key, salt + path)."""
    digest = hmac.new(bytes.fromhex(KEY), bytes.fromhex(SALT) + path.encode(), hashlib.sha256).digest()
    return "/" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode() + path


def main():
    binary = sys.argv[1]
    work = tempfile.mkdtemp(prefix="imageproxy-imgproxy-")
    servers = None
    failures = []
    try:
        origin = os.path.join(work, "origin")
        os.mkdir(origin)
        make_sources(origin, random.Random(7))  # land.jpg 1200x800, tall.jpg 600x900, small.jpg 160x120, square.png
        servers = Servers(binary, origin, work, {"IMAGEPROXY_COMPAT_IMGPROXY_ENABLED": "true", "IMGPROXY_KEY": KEY, "IMGPROXY_SALT": SALT})
        base = "http://127.0.0.1:%d" % servers.origin_port
        land, tall, small = base + "/land.jpg", base + "/tall.jpg", base + "/small.jpg"

        def library(url, *advanced, **options):
            return ImgProxy(url, key=KEY, salt=SALT, advanced=list(advanced), **options)()

        # (URL, expected status, format, width, height): sizes by imgproxy's rules (fit: the larger shrink; fill:
        # the smaller, then cropped; fill-down without enlarge: the box's aspect within the source; auto: fill
        # when the box and the source share an orientation; rotate: the turned source is sized).
        table = [
            (library(land, resizing_type="fit", width=300, height=300), 200, "JPEG", 300, 200),
            (library(land, resizing_type="fill", width=300, height=300), 200, "JPEG", 300, 300),
            (library(land, resizing_type="auto", width=300, height=400), 200, "JPEG", 300, 200),
            (library(land, resizing_type="auto", width=400, height=300), 200, "JPEG", 400, 300),
            (library(tall, resizing_type="fit", width=0, height=300), 200, "JPEG", 200, 300),
            (library(small, resizing_type="fill", width=300, height=300, enlarge=True), 200, "JPEG", 300, 300),
            (library(small, resizing_type="fit", width=300, height=300), 200, "JPEG", 160, 120),
            (library(land, resizing_type="fill", width=300, height=300, extension="png"), 200, "PNG", 300, 300),
            (library(land, resizing_type="fill", width=200, height=200, gravity="sm"), 200, "JPEG", 200, 200),
            (library(land, "q:50", "bl:2", resizing_type="fit", width=120, height=0, extension="webp"), 200, "WEBP", 120, 80),
            (signed("/rs:fill-down:300:300/plain/%s@webp" % small), 200, "WEBP", 120, 120),
            (signed("/rs:force:300:100/plain/%s" % land), 200, "JPEG", 300, 100),
            (signed("/s:300:200/rt:fill/g:nowe/plain/%s" % land), 200, "JPEG", 300, 200),
            (signed("/w:150/dpr:2/plain/%s" % land), 200, "JPEG", 300, 200),
            (signed("/rs:fit:300:300:0:1/bg:255:0:0/plain/%s" % small), 200, "JPEG", 300, 300),
            (signed("/c:0.5:0.5/rs:fit:300:0/plain/%s" % land), 200, "JPEG", 300, 200),
            (signed("/rot:90/w:300/plain/%s" % land), 200, "JPEG", 300, 450),
            (signed("/f:png/rs:fit:100:100/%s" % base64.urlsafe_b64encode(land.encode()).rstrip(b"=").decode()), 200, "PNG", 100, 67),
            (signed("/rs:fit:100:100/plain/%s" % base.replace("http://", "http%3A%2F%2F") + "%2Fland.jpg"), 200, "JPEG", 100, 67),
            (signed("/pd:10/w:100/plain/%s" % land), 400, None, 0, 0),
            (signed("/w:100/plain/%s" % land).replace("/w:100/", "/w:101/"), 403, None, 0, 0),
            ("/insecure/w:100/plain/%s" % land, 403, None, 0, 0),
        ]
        for path, status, kind, width, height in table:
            answer = fetch("http://127.0.0.1:%d%s" % (servers.proxy_port, path))
            if answer[0] != status:
                failures.append("%s: status %d, expected %d (%s)" % (path, answer[0], status, answer[2][:120]))
                continue
            if status != 200:
                continue
            image = Image.open(io.BytesIO(answer[2]))
            if (image.format, image.size) != (kind, (width, height)):
                failures.append("%s: %s %s, expected %s %s" % (path, image.format, image.size, kind, (width, height)))
            if "bg:255:0:0" in path and image.convert("RGB").getpixel((0, 0))[0] < 240:
                failures.append("%s: the extended area is not the red background" % path)
        download = fetch("http://127.0.0.1:%d%s" % (servers.proxy_port, signed("/fn:holiday/att:1/w:100/plain/%s" % land)))
        if download[0] != 200 or download[3].get("Content-Disposition") != 'attachment; filename="holiday.jpg"':
            failures.append("fn:holiday/att:1: status %d, Content-Disposition %s" % (download[0], download[3].get("Content-Disposition")))
        print("check-dialects: imgproxy table: %d URLs (PyPI imgproxy %s and by hand)" % (len(table) + 1, "1.0.0"))
        for failure in failures:
            print("check-dialects: DIFFERS " + failure)

        return 1 if failures else 0
    finally:
        if servers:
            servers.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
