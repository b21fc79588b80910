"""ImageProxy URLs from Python: build /img paths from options, sign them as the server checks them
(HMAC-SHA256 of the path and query, base64url without padding, appended as the last parameter ``sig``),
and make ``srcset`` strings. Standard library only; Python 3.8+.

>>> image_path("https://example.com/a.jpg", width=300, format="webp")
'/img?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300&format=webp'
>>> sign("/img?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300", "secret")
'/img?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300&sig=UZDxHmk3FQlQkVzaxWKkatGBUGAasjWQFz_TI60vwt8'
"""

import base64
import hashlib
import hmac
import urllib.parse

__all__ = ["image_path", "image_url", "imgproxy_url", "sign", "signed_image_url", "srcset", "thumbor_url"]

# Option names and the query parameters they become, in the order they are written (the same order as
# the JavaScript client's, so both make the same URL, cache entry and signature for the same options).
_PARAMETERS = [
    ("preset", "preset"), ("width", "w"), ("height", "h"), ("fit", "fit"), ("gravity", "g"), ("focal_point", "fp"), ("crop", "crop"),
    ("format", "format"), ("quality", "q"), ("dpr", "dpr"), ("background", "bg"), ("enlarge", "enlarge"),
    ("progressive", "progressive"), ("filters", "filter"), ("lqip", "lqip"), ("max_bytes", "max_bytes"), ("colour", "colour"),
    ("watermark", "wm"), ("watermark_url", "wmurl"), ("text", "text"), ("text_size", "text_size"),
    ("text_color", "text_color"), ("text_gravity", "text_g"), ("text_x", "text_x"), ("text_y", "text_y"),
    ("text_opacity", "text_opacity"),
]


def _value(name, value):
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple)):
        return ",".join(str(item) for item in value)
    if name in ("background", "text_color"):
        return str(value).lstrip("#")
    return str(value)


def image_path(source, **options):
    """The path and query of an /img request for ``source`` (an absolute http(s) URL, or ``s3://bucket/key``
    for an object on the server's S3 endpoint)."""
    if not isinstance(source, str) or not source.lower().startswith(("http://", "https://", "s3://")):
        raise ValueError("source must be an absolute http(s) URL or s3://bucket/key, got %r" % (source,))
    known = {name for name, _ in _PARAMETERS}
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError("unknown option %s" % unknown[0])
    path = "/img?url=" + urllib.parse.quote(source, safe="")
    for name, parameter in _PARAMETERS:
        value = options.get(name)
        if value is None or value is False:
            continue
        path += "&%s=%s" % (parameter, urllib.parse.quote(_value(name, value), safe=""))
    return path


def image_url(base, source, **options):
    """A full, unsigned /img URL; ``base`` is where ImageProxy is served."""
    return base.rstrip("/") + image_path(source, **options)


def sign(path_and_query, key):
    """Appends ``&sig=`` + base64url(HMAC-SHA256(key, path_and_query)) without padding."""
    if not key:
        raise ValueError("a signing key is required")
    key_bytes = key.encode() if isinstance(key, str) else key
    mac = hmac.new(key_bytes, path_and_query.encode(), hashlib.sha256).digest()
    return path_and_query + "&sig=" + base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def signed_image_url(base, source, key, **options):
    """A full, signed /img URL."""
    return base.rstrip("/") + sign(image_path(source, **options), key)


def srcset(base, source, widths, key=None, **options):
    """``url 320w, url 640w, ...`` for the given widths (smallest first), signed when ``key`` is given."""
    if not widths:
        raise ValueError("widths must not be empty")
    candidates = []
    for width in sorted({int(round(width)) for width in widths}):
        path = image_path(source, width=width, **options)
        candidates.append("%s%s %dw" % (base.rstrip("/"), sign(path, key) if key else path, width))
    return ", ".join(candidates)


# The URL dialects the server also answers when they are on (compat.imgproxy, compat.thumbor).

def imgproxy_url(base, source, key=None, salt=None, signature_size=32, resizing_type="fit", width=0, height=0,
                 enlarge=False, gravity=None, quality=None, format=None, advanced=()):
    """An imgproxy URL, signed as imgproxy signs (HMAC-SHA256 of salt + path, hex key and salt, the digest cut to
    signature_size bytes), or ``insecure`` without a key.

    >>> imgproxy_url("https://img.example.com", "https://example.com/a.jpg", width=300, gravity="sm", format="webp")
    'https://img.example.com/insecure/rs:fit:300:0:0/g:sm/plain/https%3A%2F%2Fexample.com%2Fa.jpg@webp'
    """
    segments = ["rs:%s:%d:%d:%d" % (resizing_type, width, height, 1 if enlarge else 0)]
    if gravity:
        segments.append("g:" + gravity)
    if quality:
        segments.append("q:%d" % quality)
    segments.extend(advanced)
    path = "/" + "/".join(segments) + "/plain/" + urllib.parse.quote(source, safe="") + ("@" + format if format else "")
    if not key:
        return base.rstrip("/") + "/insecure" + path
    digest = hmac.new(bytes.fromhex(key), bytes.fromhex(salt or "") + path.encode(), hashlib.sha256).digest()
    return base.rstrip("/") + "/" + base64.urlsafe_b64encode(digest[:signature_size]).rstrip(b"=").decode() + path


def thumbor_url(base, image, security_key=None, width=0, height=0, fit_in=False, flip_horizontally=False,
                flip_vertically=False, halign=None, valign=None, smart=False, filters=()):
    """A thumbor URL, signed as libthumbor signs (HMAC-SHA1 of the path, URL-safe base64 with padding), or
    ``unsafe/`` without a key.

    >>> thumbor_url("http://my.server.com", "my.server.com/some/path/to/image.jpg", "my-security-key", width=300, height=200)
    'http://my.server.com/8ammJH8D-7tXy6kU3lTvoXlhu4o=/300x200/my.server.com/some/path/to/image.jpg'
    """
    parts = []
    if fit_in:
        parts.append("fit-in")
    if width or height or flip_horizontally or flip_vertically:
        parts.append("%s%dx%s%d" % ("-" if flip_horizontally else "", width, "-" if flip_vertically else "", height))
    if halign and halign != "center":
        parts.append(halign)
    if valign and valign != "middle":
        parts.append(valign)
    if smart:
        parts.append("smart")
    if filters:
        parts.append("filters:" + ":".join(filters))
    path = "/".join(parts + [image])
    if not security_key:
        return base.rstrip("/") + "/unsafe/" + path
    digest = hmac.new(security_key.encode(), path.encode(), hashlib.sha1).digest()
    return base.rstrip("/") + "/" + base64.urlsafe_b64encode(digest).decode() + "/" + path
