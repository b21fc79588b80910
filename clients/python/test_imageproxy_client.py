"""Tests of imageproxy_client: URL building and signing, and against the real binary (IMAGEPROXY_BINARY,
set by the Swift test suite's ClientLibraryTests) with a local origin on 127.0.0.1."""

import base64
import doctest
import hashlib
import hmac
import http.server
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

import imageproxy_client
from imageproxy_client import image_path, imgproxy_url, sign, signed_image_url, srcset, thumbor_url

HERE = os.path.dirname(os.path.abspath(__file__))
PHOTO = open(os.path.join(HERE, "..", "fixtures", "photo.jpg"), "rb").read()


class BuildingAndSigning(unittest.TestCase):
    def test_docstring_examples(self):
        failures, _ = doctest.testmod(imageproxy_client)
        self.assertEqual(failures, 0)

    def test_options_in_a_fixed_order(self):
        path = image_path("https://example.com/a b.jpg?v=2", quality=70, width=300, crop=(0, 0, "0.5", "1.0"),
                          background="#ff0000", enlarge=True, progressive=False, filters=["grayscale", "round:20"])
        self.assertEqual(path, "/img?url=https%3A%2F%2Fexample.com%2Fa%20b.jpg%3Fv%3D2&w=300&crop=0%2C0%2C0.5%2C1.0"
                               "&q=70&bg=ff0000&enlarge=1&filter=grayscale%2Cround%3A20")

    def test_same_url_as_the_javascript_client(self):
        # The JavaScript client's test writes the same options in the same order.
        path = image_path("https://example.com/photos/a b.jpg?v=2", quality=70, width=300, format="webp", fit="cover",
                          height=200, filters=["grayscale", "round:20"], focal_point=(0.3, 0.6),
                          crop=(0, 0, "0.5", "1.0"), background="#ff0000", enlarge=True, progressive=False)
        self.assertEqual(path, "/img?url=https%3A%2F%2Fexample.com%2Fphotos%2Fa%20b.jpg%3Fv%3D2&w=300&h=200&fit=cover"
                               "&fp=0.3%2C0.6&crop=0%2C0%2C0.5%2C1.0&format=webp&q=70&bg=ff0000&enlarge=1"
                               "&filter=grayscale%2Cround%3A20")

    def test_s3_sources_and_size_targets(self):
        self.assertEqual(image_path("s3://images/a b.jpg", width=300, max_bytes=20000),
                         "/img?url=s3%3A%2F%2Fimages%2Fa%20b.jpg&w=300&max_bytes=20000")

    def test_presets_come_first_as_in_the_javascript_client(self):
        self.assertEqual(image_path("https://example.com/photos/a b.jpg?v=2", width=60, preset=["thumb", "webp"]),
                         "/img?url=https%3A%2F%2Fexample.com%2Fphotos%2Fa%20b.jpg%3Fv%3D2&preset=thumb%2Cwebp&w=60")

    def test_faces_a_crop_around_them_and_their_redaction(self):
        self.assertEqual(image_path("https://example.com/a.jpg", width=300, height=300, fit="cover", gravity="face",
                                    filters=["redact_faces:pixelate"]),
                         "/img?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300&h=300&fit=cover&g=face&filter=redact_faces%3Apixelate")

    def test_jpeg_xl_and_wide_gamut(self):
        self.assertEqual(image_path("https://example.com/a.jpg", width=300, format="jxl", colour="keep", watermark="logo"),
                         "/img?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300&format=jxl&colour=keep&wm=logo")

    def test_watermarks_and_text_as_the_javascript_client_writes_them(self):
        self.assertEqual(
            image_path("https://example.com/a.jpg", width=300, watermark="logo", text="© Example & Co",
                       text_color="#ffffffcc", text_gravity="southwest", text_size=18),
            "/img?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300&wm=logo&text=%C2%A9%20Example%20%26%20Co&text_size=18"
            "&text_color=ffffffcc&text_g=southwest")

    def test_bad_input(self):
        with self.assertRaises(ValueError):
            image_path("/relative.jpg")
        with self.assertRaisesRegex(TypeError, "unknown option widht"):
            image_path("https://example.com/a.jpg", widht=3)
        with self.assertRaises(ValueError):
            sign("/img?url=x", "")

    def test_srcset(self):
        value = srcset("https://i.test", "https://example.com/a.jpg", [640, 320, 320], key="k", format="webp")
        candidates = value.split(", ")
        self.assertEqual([candidate.split(" ")[1] for candidate in candidates], ["320w", "640w"])
        for candidate in candidates:
            self.assertRegex(candidate, r"^https://i\.test/img\?url=.*&format=webp&sig=[A-Za-z0-9_-]{43} \d+w$")


class _Origin(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/photo.jpg":
            self.send_response(200)
            self.send_header("Content-Type", "image/jpeg")
            self.send_header("Content-Length", str(len(PHOTO)))
            self.end_headers()
            self.wfile.write(PHOTO)
        else:
            self.send_error(404)

    def log_message(self, *arguments):
        pass


@unittest.skipUnless(os.environ.get("IMAGEPROXY_BINARY"), "IMAGEPROXY_BINARY not set")
class AgainstTheBinary(unittest.TestCase):
    def setUp(self):
        self.origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Origin)
        threading.Thread(target=self.origin.serve_forever, daemon=True).start()
        self.cache = tempfile.mkdtemp(prefix="imageproxy-py-")
        self.key = "python-client-key"
        environment = {"PATH": "/usr/bin:/bin", "IMAGEPROXY_BIND": "127.0.0.1:0", "IMAGEPROXY_CACHE_DIR": self.cache,
                       "IMAGEPROXY_ALLOW_LOOPBACK_SOURCES": "true", "IMAGEPROXY_SIGNING_KEY": self.key,
                       "IMAGEPROXY_COMPAT_IMGPROXY_ENABLED": "true", "IMAGEPROXY_COMPAT_IMGPROXY_PREFIX": "/ip",
                       "IMGPROXY_KEY": "7079", "IMGPROXY_SALT": "73616c74",
                       "IMAGEPROXY_COMPAT_THUMBOR_ENABLED": "true", "IMAGEPROXY_COMPAT_THUMBOR_PREFIX": "/th",
                       "IMAGEPROXY_COMPAT_THUMBOR_SECURITY_KEY": "thumbor-key"}
        self.proxy = subprocess.Popen([os.environ["IMAGEPROXY_BINARY"]], env=environment, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE)
        output, deadline = b"", time.time() + 20
        while time.time() < deadline:
            line = self.proxy.stderr.readline()
            output += line
            match = re.search(rb"listening on 127\.0\.0\.1:(\d+)", output)
            if match:
                self.port = int(match.group(1))
                break
        else:
            self.fail("no listening line: %r" % output)

    def tearDown(self):
        self.proxy.terminate()
        self.proxy.wait(10)
        self.proxy.stderr.close()
        self.origin.shutdown()
        self.origin.server_close()
        shutil.rmtree(self.cache, ignore_errors=True)

    def status(self, url):
        try:
            with urllib.request.urlopen(url, timeout=20) as response:
                return response.status, response.headers.get("Content-Type"), response.read()
        except urllib.error.HTTPError as error:
            return error.code, None, b""

    def test_signed_urls_are_served_and_unsigned_refused(self):
        base = "http://127.0.0.1:%d" % self.port
        source = "http://127.0.0.1:%d/photo.jpg" % self.origin.server_address[1]
        url = signed_image_url(base, source, self.key, width=48, format="png")
        status, content_type, body = self.status(url)
        self.assertEqual(status, 200)
        self.assertEqual(content_type, "image/png")
        self.assertEqual(int.from_bytes(body[16:20], "big"), 48)
        self.assertEqual(self.status(base + image_path(source, width=48, format="png"))[0], 403)
        self.assertEqual(self.status(url.replace("w=48", "w=49"))[0], 403)

    def test_imgproxy_and_thumbor_urls_are_served(self):
        base = "http://127.0.0.1:%d" % self.port
        source = "http://127.0.0.1:%d/photo.jpg" % self.origin.server_address[1]
        status, _, body = self.status(imgproxy_url(base + "/ip", source, "7079", "73616c74", width=24, format="png"))
        self.assertEqual((status, int.from_bytes(body[16:20], "big")), (200, 24))
        self.assertEqual(self.status(imgproxy_url(base + "/ip", source, width=24))[0], 403)
        image = source.replace("http://", "")
        status, _, body = self.status(thumbor_url(base + "/th", image, "thumbor-key", width=20, fit_in=True, filters=["format(png)"]))
        self.assertEqual((status, int.from_bytes(body[16:20], "big")), (200, 20))
        self.assertEqual(self.status(thumbor_url(base + "/th", image, width=20))[0], 403)


class Dialects(unittest.TestCase):
    def test_imgproxy_signature_is_imgproxys(self):
        # imgproxy's examples/signature.py key, salt and path; the digest computed here independently.
        key = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
        salt = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
        url = imgproxy_url("", "http://img.example.com/pretty/image.jpg", key, salt, width=300, height=300)
        path = "/rs:fit:300:300:0/plain/http%3A%2F%2Fimg.example.com%2Fpretty%2Fimage.jpg"
        digest = hmac.new(bytes.fromhex(key), bytes.fromhex(salt) + path.encode(), hashlib.sha256).digest()
        self.assertEqual(url, "/" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode() + path)
        short = imgproxy_url("", "http://img.example.com/pretty/image.jpg", key, salt, 8, width=300, height=300)
        self.assertEqual(short, "/" + base64.urlsafe_b64encode(digest[:8]).rstrip(b"=").decode() + path)

    def test_thumbor_filters_and_flips(self):
        self.assertEqual(thumbor_url("", "a.example/x.jpg", width=300, fit_in=True, flip_vertically=True, halign="left",
                                     smart=True, filters=["quality(80)"]),
                         "/unsafe/fit-in/300x-0/left/smart/filters:quality(80)/a.example/x.jpg")


if __name__ == "__main__":
    unittest.main()
