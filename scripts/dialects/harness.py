"""Shared parts of the dialect checks: source images, a loopback origin, ImageProxy started from its binary,
SSIM. Everything listens on 127.0.0.1 only; the checks run inside a loopback-only network namespace."""
import io
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import numpy
from PIL import Image, ImageDraw


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def make_web_sources(folder, wallpapers):
    """Real images of the kind pages serve, from Debian's ukui-wallpapers (renders and illustrations at 3640-3840
    px), cut to web sizes: a landscape and a portrait JPEG (baseline, 4:2:0), a PNG with alpha, a small JPEG."""
    def fitted(name, size, box=None):
        image = Image.open(os.path.join(wallpapers, name))
        if box:
            image = image.crop(box)
        return image.resize(size, Image.LANCZOS)
    fitted("2004default.jpg", (1200, 750)).convert("RGB").save(os.path.join(folder, "web-land.jpg"), quality=85)
    fitted("string.jpg", (600, 900), box=(1220, 0, 2820, 2400)).convert("RGB").save(os.path.join(folder, "web-tall.jpg"), quality=85)
    fitted("calla.png", (555, 360)).save(os.path.join(folder, "web-alpha.png"))
    fitted("firstgeneration.jpg", (182, 120)).convert("RGB").save(os.path.join(folder, "web-small.jpg"), quality=85)
    return {"web-land.jpg": (1200, 750), "web-tall.jpg": (600, 900), "web-alpha.png": (555, 360), "web-small.jpg": (182, 120)}


def make_sources(folder, rng):
    """Photograph-like sources: smooth light, shapes with soft edges, texture correlated over a few pixels (as a
    camera's is; per-pixel white noise would measure only the resamplers' noise handling); landscape, portrait,
    square (PNG) and small (upscaled by most URLs)."""
    sizes = {"land.jpg": (1200, 800), "tall.jpg": (600, 900), "square.png": (512, 512), "small.jpg": (160, 120)}
    for name, (width, height) in sizes.items():
        x = numpy.linspace(0, 1, width)[None, :]
        y = numpy.linspace(0, 1, height)[:, None]
        ones = numpy.ones((height, width))
        base = numpy.stack([(180 * x + 40 * y) * ones, (60 + 120 * y) * ones, (200 - 150 * x * y) * ones], axis=2)
        image = Image.fromarray(numpy.clip(base, 0, 255).astype(numpy.uint8)).resize((width * 2, height * 2))
        draw = ImageDraw.Draw(image)
        for _ in range(40):
            x0, y0 = rng.randrange(width * 2), rng.randrange(height * 2)
            size = rng.randrange(max(8, width // 10), max(16, width // 2))
            colour = tuple(rng.randrange(256) for _ in range(3))
            shape = rng.choice(["ellipse", "rectangle", "line"])
            if shape == "line":
                draw.line([x0, y0, x0 + size, y0 + rng.randrange(-size, size)], fill=colour, width=rng.randrange(2, 12))
            else:
                getattr(draw, shape)([x0, y0, x0 + size, y0 + size * rng.uniform(0.5, 1.5)], fill=colour)
        image = image.resize((width, height), Image.LANCZOS)
        texture = numpy.random.default_rng(rng.randrange(1 << 30)).normal(0, 5, (height // 3 + 1, width // 3 + 1))
        grain = numpy.asarray(Image.fromarray(texture.astype(numpy.float32), mode="F").resize((width, height), Image.BICUBIC))
        image = Image.fromarray(numpy.clip(numpy.asarray(image, dtype=numpy.float64) + grain[:, :, None], 0, 255).astype(numpy.uint8))
        if name.endswith(".png"):
            image.save(os.path.join(folder, name))
        else:
            image.save(os.path.join(folder, name), quality=90)
    return sizes


def channel_means(body):
    image = Image.open(io.BytesIO(body)).convert("RGBA")
    flat = Image.new("RGBA", image.size, (255, 255, 255, 255))
    flat.alpha_composite(image)
    return numpy.asarray(flat.convert("RGB"), dtype=numpy.float64).reshape(-1, 3).mean(axis=0)


def luma(body):
    image = Image.open(io.BytesIO(body))
    if image.mode in ("RGBA", "LA", "P"):
        image = image.convert("RGBA")
        flat = Image.new("RGBA", image.size, (255, 255, 255, 255))
        flat.alpha_composite(image)
        image = flat
    return numpy.asarray(image.convert("L"), dtype=numpy.float64)


def blur(array, sigma=1.5):
    radius = int(3 * sigma + 0.5)
    kernel = numpy.exp(-(numpy.arange(-radius, radius + 1) ** 2) / (2 * sigma * sigma))
    kernel /= kernel.sum()
    padded = numpy.pad(array, radius, mode="reflect")
    rows = numpy.apply_along_axis(lambda r: numpy.convolve(r, kernel, mode="valid"), 1, padded)
    return numpy.apply_along_axis(lambda c: numpy.convolve(c, kernel, mode="valid"), 0, rows)


def ssim(a, b):
    """Gaussian-window SSIM (sigma 1.5) of two luma planes, as Wang et al."""
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    mu_a, mu_b = blur(a), blur(b)
    var_a, var_b, cov = blur(a * a) - mu_a ** 2, blur(b * b) - mu_b ** 2, blur(a * b) - mu_a * mu_b
    index = ((2 * mu_a * mu_b + c1) * (2 * cov + c2)) / ((mu_a ** 2 + mu_b ** 2 + c1) * (var_a + var_b + c2))
    return float(index.mean())


def fetch(url):
    try:
        with urllib.request.urlopen(url, timeout=60) as answer:
            return answer.status, answer.headers.get("Content-Type", ""), answer.read(), answer.headers
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read(), error.headers


def wait_for(url, process, name):
    for _ in range(300):
        if process.poll() is not None:
            sys.exit("check-dialects: %s exited at start" % name)
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.1)
    sys.exit("check-dialects: %s did not start" % name)



class Servers:
    """A static origin over `folder` and ImageProxy (`binary serve`) with `environment` added; both stopped on exit."""

    def __init__(self, binary, folder, work, environment):
        self.processes = []
        self.origin_port, self.proxy_port = free_port(), free_port()
        self.processes.append(subprocess.Popen([sys.executable, "-m", "http.server", str(self.origin_port), "--bind", "127.0.0.1",
                                                "--directory", folder], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        env = dict(os.environ, IMAGEPROXY_BIND="127.0.0.1:%d" % self.proxy_port, IMAGEPROXY_CACHE_DIR=os.path.join(work, "cache"),
                   IMAGEPROXY_ALLOW_LOOPBACK_SOURCES="true", IMAGEPROXY_SECURITY_ALLOWED_HOSTS="127.0.0.1", **environment)
        self.processes.append(subprocess.Popen([binary, "serve"], env=env, stdout=subprocess.DEVNULL,
                                               stderr=open(os.path.join(work, "proxy.log"), "w")))
        wait_for("http://127.0.0.1:%d/" % self.origin_port, self.processes[0], "the origin")
        wait_for("http://127.0.0.1:%d/health" % self.proxy_port, self.processes[1], "ImageProxy")

    def add(self, process):
        self.processes.append(process)

    def stop(self):
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
