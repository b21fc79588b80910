"""thumbor URLs asked of a real thumbor and of ImageProxy: the same width, height and format, and SSIM >= 0.97.

Run by scripts/check-dialects.sh inside a loopback-only network namespace, with thumbor (PyPI, the version
../shared/bench installs), libthumbor, Pillow and numpy in a venv. It makes the source images (Pillow), serves
them from a loopback origin, starts thumbor and ImageProxy (both told the same security key), generates URLs
with libthumbor over random sizes, fits, alignments, crops, flips and filters, and compares the answers.
Prints the SSIM distribution; exits 1 on any difference beyond the bar.
"""
import io
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy
from libthumbor import CryptoURL
from PIL import Image

from harness import Servers, channel_means, fetch, free_port, luma, make_sources, make_web_sources, ssim, wait_for

KEY = "differential-security-key"
# The bar, per URL: the same format and size as stock thumbor (a derived side within one pixel, see below) and the
# same colours (each channel's mean within COLOUR_LEVELS); and the pixels, compared as lossless answers (the same
# URL with format(png) in place of format() and quality(), so that two lossy encoders' noise is not counted) with a
# thumbor that decodes JPEGs whole (whole_decode_engine.py: stock thumbor's JPEG draft decode takes 8x8 block
# averages for a reduce), at SSIM >= SSIM_BAR. These kinds of URL are held to SSIM_FLOOR instead, because thumbor
# itself is off there by more than the bar measures:
#   - a fill box whose crop either side rounds more than CROP_SHIFT output pixels away from the exact crop: thumbor
#     crops whole source pixels before resizing (transformer.auto_crop: the centre floored, the width rounded up, no
#     crop when the aspect ratios agree to two decimals; an enlarged source multiplies its shift), ImageProxy whole
#     output pixels after (libvips' thumbnail); half a pixel's shift of a textured picture costs SSIM 0.03-0.1;
#   - an answer with a side under SMALL_SIDE pixels, where SSIM's 11-pixel windows see mostly the edges;
#   - a derived side one pixel apart (see below), where ours is resized once more to be compared;
#   - a source enlarged more than GROWN times, where the interpolators differ visibly (Pillow's Lanczos3,
#     libvips' bicubic).
# A wrong crop, flip, rotation or alignment scores below 0.8; a wrong fill, grayscale or brightness moves a channel's
# mean by more than COLOUR_LEVELS.
SSIM_BAR = 0.97
SSIM_FLOOR = 0.85
SSIM_FLOOR_GROWN = 0.78  # the same, enlarged: a shift grows with the enlargement
CROP_SHIFT = 0.2
SMALL_SIDE = 64
GROWN = 4.0
COLOUR_LEVELS = 4.0
MAX_DIMENSION = 4096  # image.maxDimension's default


def random_options(rng, name, size):
    """One libthumbor option set over the grammar's parts and the filters both sides implement alike."""
    options = {"image_url": None}
    fit_in = rng.random() < 0.35
    width = rng.choice([0, rng.randrange(40, 900)])
    height = rng.choice([0, rng.randrange(40, 900)]) if width else rng.randrange(40, 900)
    if fit_in:
        options["fit_in"] = True
    options["width"], options["height"] = width, height
    if rng.random() < 0.1:
        options["flip"] = True
    if rng.random() < 0.1:
        options["flop"] = True
    if not fit_in and width and height and rng.random() < 0.4:
        options["halign"] = rng.choice(["left", "center", "right"])
        options["valign"] = rng.choice(["top", "middle", "bottom"])
    if rng.random() < 0.15:
        left, top = rng.randrange(size[0] // 2), rng.randrange(size[1] // 2)
        options["crop"] = ((left, top), (rng.randrange(left + 20, size[0]), rng.randrange(top + 20, size[1])))
    filters = []
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        choice = rng.choice(["quality", "format", "blur", "grayscale", "rotate", "upscale", "fill", "brightness",
                             "contrast", "strip_icc", "no_upscale", "background_color"])
        if choice == "quality":
            filters.append("quality(%d)" % rng.randrange(50, 95))
        elif choice == "format":
            filters.append("format(%s)" % rng.choice(["webp", "png", "jpeg"]))
        elif choice == "blur":
            filters.append("blur(%d)" % rng.randrange(1, 6))
        elif choice == "grayscale":
            filters.append("grayscale()")
        elif choice == "rotate":
            filters.append("rotate(%d)" % rng.choice([90, 180, 270]))
        elif choice == "upscale" and fit_in:
            filters.append("upscale()")
        elif choice == "no_upscale" and fit_in:
            # Without fit-in thumbor clamps each side to the source's separately (docs/dialects.md: knowingly different).
            filters.append("no_upscale()")
        elif choice == "fill" and fit_in and width and height:
            filters.append("fill(%s)" % rng.choice(["ff0000", "white", "black", "00ff88"]))
        elif choice == "brightness":
            filters.append("brightness(%d)" % rng.randrange(-30, 31))
        elif choice == "contrast":
            filters.append("contrast(%d)" % rng.randrange(-30, 31))
        elif choice == "strip_icc":
            filters.append("strip_icc()")
        elif choice == "background_color":
            filters.append("background_color(%s)" % rng.choice(["ffffff", "000000"]))
    names = [f.split("(")[0] for f in filters]
    filters = [f for i, f in enumerate(filters) if f.split("(")[0] not in names[:i]]  # one of each
    if any(f.startswith("fill(") for f in filters):
        # Knowingly different (docs/dialects.md): thumbor pads after the filters and clamps the box with no_upscale();
        # ImageProxy's filters apply to the padded image.
        filters = [f for f in filters if f.split("(")[0] not in ("brightness", "contrast", "grayscale", "no_upscale")]
    if "upscale()" in filters:
        # After a quarter turn ImageProxy refuses upscale() (docs/dialects.md); before it, both agree.
        filters = ["upscale()"] + [f for f in filters if f != "upscale()"]
    if filters:
        options["filters"] = filters
    return options


def thumbor_fit_in_size(options, cropped):
    """thumbor's fit-in size for a box with one side 0 (thumbor/transformer.py): it rounds the missing side
    (half to even), then derives the given one back from it, so a 694x77 source in fit-in/209x0 is 207x23."""
    width, height = abs(options["width"] or 0), abs(options["height"] or 0)
    if not options.get("fit_in") or (width and height) or not (width or height):
        return None
    source_width, source_height = cropped
    target_width = width or round(height * source_width / source_height)
    target_height = height or round(width * source_height / source_width)
    if target_width >= source_width and target_height >= source_height:
        return None
    if source_width / target_width >= source_height / target_height:
        return target_width, round(source_height * target_width / source_width + 1e-5)
    return round(source_width * target_height / source_height + 1e-5), target_height


def thumbor_crop_shift(options, cropped):
    """How far, in output pixels, thumbor's or ImageProxy's crop for a fill box lands from the exact crop (0 without one)."""
    width, height = abs(options["width"] or 0), abs(options["height"] or 0)
    source_width, source_height = cropped
    if options.get("fit_in") or not (width or height):
        return 0.0
    if not width or not height:
        # One side given: thumbor derives the other, then crops to that box's aspect (a column or row of the
        # source when the derived side was rounded); ImageProxy scales the whole source (no crop).
        derived_width = width or round(height * source_width / source_height)
        derived_height = height or round(width * source_height / source_width)
        return whole_source_shift(options, cropped, derived_width, derived_height)
    return exact_crop_shift(options, cropped, width, height)


def whole_source_shift(options, cropped, width, height):
    """thumbor's crop for a box derived from one side, against the whole source ImageProxy scales."""
    source_width, source_height = cropped
    if round(source_width / source_height, 2) == round(width / height, 2):
        return 0.0
    if width / source_width > height / source_height:
        theirs = (source_width, int(round(source_width * height / width)))
    else:
        theirs = (int(round(math.ceil(width * source_height / height))), source_height)
    shift = 0.0
    for side, source, target in ((0, source_width, width), (1, source_height, height)):
        their_start = int(round(min(max((source * 0.5) // 1 - theirs[side] / 2, 0.0), source - theirs[side])))
        their_end = min(their_start + theirs[side], source)
        shift = max(shift, their_start * target / source, (source - their_end) * target / source)
    return shift


def exact_crop_shift(options, cropped, width, height):
    """thumbor's and ImageProxy's crops for a fill box against the exact one, in output pixels."""
    source_width, source_height = cropped
    share = {"left": 0.0, "center": 0.5, "right": 1.0, "top": 0.0, "middle": 0.5, "bottom": 1.0}
    across, down = share[options.get("halign", "center")], share[options.get("valign", "middle")]
    if width / source_width > height / source_height:
        exact = (source_width, source_width * height / width)
        theirs = (source_width, int(round(source_width * height / width)))
    else:
        exact = (width * source_height / height, source_height)
        theirs = (int(round(math.ceil(width * source_height / height))), source_height)
    if round(source_width / source_height, 2) == round(width / height, 2):
        theirs = (source_width, source_height)
    shift = 0.0
    for side, focus, source, target in ((0, across, source_width, width), (1, down, source_height, height)):
        exact_start = min(max(source * focus - exact[side] / 2, 0.0), source - exact[side])
        their_start = int(round(min(max((source * focus) // 1 - theirs[side] / 2, 0.0), source - theirs[side])))
        their_end = min(their_start + theirs[side], source)
        scale = target / exact[side]
        shift = max(shift, abs(their_start - exact_start) * scale, abs(their_end - exact_start - exact[side]) * scale)
        # ImageProxy resizes to cover the box, then crops whole output pixels (libvips' thumbnail).
        covered = source * scale
        our_start = max(0, min(round(covered) - target, (round(covered) - target) * focus // 1))
        shift = max(shift, abs(our_start - exact_start * scale))
    return shift


def lossless_options(options):
    """The same options answered as PNG: the pixels both sides computed, without either encoder's losses."""
    lossless = dict(options)
    kept = [f for f in options.get("filters", []) if f.split("(")[0] not in ("format", "quality")]
    lossless["filters"] = kept + ["format(png)"]
    return lossless


def start_thumbor(servers, work, name, engine):
    """A thumbor on a free loopback port, told KEY; `engine` (a module of this folder) replaces Pillow's engine."""
    port = free_port()
    conf = os.path.join(work, name + ".conf")
    with open(conf, "w") as file:
        file.write("SECURITY_KEY = %r\nALLOW_UNSAFE_URL = False\nLOADER = 'thumbor.loaders.http_loader'\n"
                   "STORAGE = 'thumbor.storages.no_storage'\nRESULT_STORAGE = None\nDETECTORS = []\n"
                   "AUTO_WEBP = False\nMAX_AGE = 0\n" % KEY)
        if engine:
            file.write("ENGINE = %r\n" % engine)
    environment = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.abspath(__file__)))
    thumbor = os.path.join(os.path.dirname(sys.executable), "thumbor")
    process = subprocess.Popen([thumbor, "--ip", "127.0.0.1", "--port", str(port), "--conf", conf, "-l", "error"],
                               stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, name + ".log"), "w"), env=environment)
    servers.add(process)
    wait_for("http://127.0.0.1:%d/healthcheck" % port, process, name)
    return port


def main():
    binary, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="imageproxy-dialects-")
    servers = None
    try:
        origin_dir = os.path.join(work, "origin")
        os.mkdir(origin_dir)
        sizes = make_sources(origin_dir, rng)
        if os.environ.get("DIALECTS_WALLPAPERS"):
            sizes.update(make_web_sources(origin_dir, os.environ["DIALECTS_WALLPAPERS"]))
        servers = Servers(binary, origin_dir, work, {"IMAGEPROXY_COMPAT_THUMBOR_ENABLED": "true",
                                                     "IMAGEPROXY_COMPAT_THUMBOR_SECURITY_KEY": KEY})
        origin_port, proxy_port = servers.origin_port, servers.proxy_port
        thumbor_port = start_thumbor(servers, work, "thumbor", None)
        whole_port = start_thumbor(servers, work, "thumbor-whole-decode", "whole_decode_engine")
        crypto = CryptoURL(key=KEY)
        stock_scores, whole_pixel_crops, small_answers = [], [], []
        scores, failures, rows, rounding, groups, colours, bounded, double_rounding = [], [], [], [], {}, [], [], []
        names = sorted(sizes)
        for index in range(count):
            name = names[index % len(names)]
            options = random_options(rng, name, sizes[name])
            options["image_url"] = "127.0.0.1:%d/%s" % (origin_port, name)
            path = crypto.generate(**options)
            theirs = fetch("http://127.0.0.1:%d%s" % (thumbor_port, path))
            ours = fetch("http://127.0.0.1:%d%s" % (proxy_port, path))
            lossless = crypto.generate(**lossless_options(options))
            whole = fetch("http://127.0.0.1:%d%s" % (whole_port, lossless))
            ours_lossless = fetch("http://127.0.0.1:%d%s" % (proxy_port, lossless))
            row = {"path": path.split("/", 2)[2], "thumbor": theirs[0], "ours": ours[0]}
            if theirs[0] != 200 or ours[0] != 200:
                row["problem"] = "status thumbor %d, ours %d: %s" % (theirs[0], ours[0], ours[2][:200].decode("utf-8", "replace"))
                failures.append(row)
                continue
            their_image, our_image = Image.open(io.BytesIO(theirs[2])), Image.open(io.BytesIO(ours[2]))
            row["size"] = [their_image.size, our_image.size]
            row["format"] = [their_image.format, our_image.format]
            cropped = sizes[name]
            if options.get("crop"):
                (left, top), (right, bottom) = options["crop"]
                cropped = (min(right, cropped[0]) - left, min(bottom, cropped[1]) - top)
            growth = max(their_image.size[0] / cropped[0], their_image.size[1] / cropped[1])
            if max(their_image.size) > MAX_DIMENSION or growth > 2 * MAX_DIMENSION / max(cropped):
                # Beyond image.maxDimension ImageProxy answers the bounded size (docs/dialects.md): not compared.
                bounded.append(row["path"])
                continue
            # A side thumbor derives from the aspect ratio may differ by one pixel: it rounds halves to even
            # (Python 3's round) and truncates in upscale(); ImageProxy rounds to nearest (docs/dialects.md).
            both_given = not options.get("fit_in") and options["width"] and options["height"]
            off = abs(their_image.size[0] - our_image.size[0]) + abs(their_image.size[1] - our_image.size[1])
            rounded_twice = off <= 3 and thumbor_fit_in_size(options, cropped) in (their_image.size, their_image.size[::-1])
            if rounded_twice and off > 1 and their_image.format == our_image.format:
                double_rounding.append(row["path"])
            elif their_image.format != our_image.format or (off and both_given) or off > 1:
                row["problem"] = "thumbor %s %s, ours %s %s" % (their_image.format, their_image.size, our_image.format, our_image.size)
                failures.append(row)
                continue
            their_luma, our_luma = luma(theirs[2]), luma(ours[2])
            if off:
                rounding.append(row["path"])
                our_luma = numpy.asarray(Image.fromarray(our_luma.astype(numpy.float32), mode="F").resize(their_image.size, Image.LANCZOS),
                                         dtype=numpy.float64)
            stock_score = ssim(their_luma, our_luma)
            whole_luma = luma(whole[2]) if whole[0] == 200 else None
            our_lossless_luma = luma(ours_lossless[2]) if ours_lossless[0] == 200 else None
            if off and our_lossless_luma is not None:
                our_lossless_luma = numpy.asarray(Image.fromarray(our_lossless_luma.astype(numpy.float32), mode="F").resize(their_image.size, Image.LANCZOS),
                                                  dtype=numpy.float64)
            comparable = whole_luma is not None and our_lossless_luma is not None and whole_luma.shape == our_lossless_luma.shape
            score = ssim(whole_luma, our_lossless_luma) if comparable else -1.0
            row["stock_ssim"] = round(stock_score, 4)
            stock_scores.append(stock_score)
            colour = float(numpy.abs(channel_means(theirs[2]) - channel_means(ours[2])).max())
            groups.setdefault("web" if name.startswith("web-") else "synthetic", []).append(score)
            row["ssim"], row["colour"] = round(score, 4), round(colour, 2)
            scores.append(score)
            colours.append(colour)
            rows.append(row)
            crop_shift = thumbor_crop_shift(options, cropped)
            if crop_shift > CROP_SHIFT:
                floor = SSIM_FLOOR if growth <= 1 else SSIM_FLOOR_GROWN
                whole_pixel_crops.append(score)
            elif min(their_image.size) < SMALL_SIDE or off or growth > GROWN:
                floor = SSIM_FLOOR if growth <= 1 else SSIM_FLOOR_GROWN
                small_answers.append(score)
            else:
                floor = SSIM_BAR
            if score < floor or colour > COLOUR_LEVELS:
                row["problem"] = "SSIM %.4f, channel means %.1f levels apart" % (score, colour)
                failures.append(row)
                if os.environ.get("DIALECTS_SAVE"):
                    for side, body in (("thumbor", theirs[2]), ("ours", ours[2])):
                        with open(os.path.join(os.environ["DIALECTS_SAVE"], "%03d-%s.%s" % (index, side, our_image.format.lower())), "wb") as file:
                            file.write(body)
        scores.sort()
        if scores:
            pick = lambda q: scores[min(len(scores) - 1, int(q * len(scores)))]
            print("check-dialects: thumbor vs ImageProxy, %d URLs (seed %d): SSIM min %.4f, p1 %.4f, p5 %.4f, median %.4f, mean %.4f"
                  % (len(scores), seed, scores[0], pick(0.01), pick(0.05), statistics.median(scores), statistics.mean(scores)))
        if colours:
            colours.sort()
            print("check-dialects: channel means apart: median %.2f, max %.2f levels" % (statistics.median(colours), colours[-1]))
        stock_scores.sort()
        if stock_scores:
            print("check-dialects: stock thumbor (draft decode) vs ImageProxy: SSIM min %.4f, p5 %.4f, median %.4f; below %.2f: %d"
                  % (stock_scores[0], stock_scores[int(0.05 * len(stock_scores))], statistics.median(stock_scores), SSIM_BAR,
                     sum(1 for value in stock_scores if value < SSIM_BAR)))
        for label, values in (("fill crops rounded to whole pixels", whole_pixel_crops),
                              ("answers with a side under %d px, a side one pixel apart or enlarged over %gx" % (SMALL_SIDE, GROWN), small_answers)):
            if values:
                print("check-dialects: %d URLs are %s (held to %.2f, %.2f enlarged): SSIM min %.4f, median %.4f"
                      % (len(values), label, SSIM_FLOOR, SSIM_FLOOR_GROWN, min(values), statistics.median(values)))
        below = sum(1 for score in scores if score < SSIM_BAR)
        print("check-dialects: SSIM below %.2f: %d of %d URLs" % (SSIM_BAR, below, len(scores)))
        if scores and statistics.median(scores) < SSIM_BAR:
            failures.append({"path": "(all)", "problem": "median SSIM %.4f below %.2f" % (statistics.median(scores), SSIM_BAR)})
        for group, values in sorted(groups.items()):
            values.sort()
            print("check-dialects:   %s sources, %d URLs: SSIM min %.4f, p5 %.4f, median %.4f; below %.2f: %d"
                  % (group, len(values), values[0], values[min(len(values) - 1, int(0.05 * len(values)))], statistics.median(values),
                     SSIM_BAR, sum(1 for value in values if value < SSIM_BAR)))
        print("check-dialects: %d URLs with a derived side one pixel apart (rounding), compared after resizing ours; "
              "%d beyond image.maxDimension in thumbor's answer, not compared; %d fit-in sizes thumbor rounds twice"
              % (len(rounding), len(bounded), len(double_rounding)))
        for row in failures[:40]:
            print("check-dialects: DIFFERS %s: %s" % (row["path"], row["problem"]))
        if os.environ.get("DIALECTS_REPORT"):
            with open(os.environ["DIALECTS_REPORT"], "w") as file:
                json.dump({"scores": scores, "failures": failures, "rows": rows}, file, indent=1)
        if failures:
            print("check-dialects: %d of %d URLs differ" % (len(failures), count))
            return 1
        return 0
    finally:
        if servers:
            servers.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
