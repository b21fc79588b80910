import ImageCore
import ProxyEngine

/// The OpenAPI 3.1 description of every route, parameter, status and header, served at `GET /openapi.json`.
/// `api/openapi.json` in the repository is the same document (`ImageProxy openapi > api/openapi.json`;
/// a test keeps the two equal); CI validates it and runs schemathesis against the binary with it.
public enum OpenAPIDocument {
    /// The document, as JSON.
    public static let json = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "ImageProxy",
    "version": "0.1.0",
    "description": "An HTTP image proxy and thumbnail service: /img resizes and re-encodes a source image with libvips, cached in memory and on disk. See README.md for the full behaviour."
  },
  "paths": {
    "/img": {
      "get": {
        "operationId": "image",
        "summary": "A variant of a source image.",
        "parameters": [
          {
            "name": "url",
            "in": "query",
            "required": true,
            "description": "Absolute http(s) URL of the source image, or s3://BUCKET/KEY for an object in a listed bucket on the configured S3 endpoint (sources.s3.*), percent-encoded.",
            "schema": {
              "type": "string",
              "minLength": 1
            },
            "example": "https://images.example.com/photo.jpg"
          },
          {
            "name": "w",
            "in": "query",
            "required": false,
            "description": "Output box width (CSS pixels; times dpr), at most image.maxDimension.",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 4096
            }
          },
          {
            "name": "h",
            "in": "query",
            "required": false,
            "description": "Output box height.",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 4096
            }
          },
          {
            "name": "fit",
            "in": "query",
            "required": false,
            "description": "How the output fills the box.",
            "schema": {
              "type": "string",
              "enum": [
                "contain",
                "cover",
                "fill",
                "pad"
              ]
            }
          },
          {
            "name": "g",
            "in": "query",
            "required": false,
            "description": "Where fit=cover crops around.",
            "schema": {
              "type": "string",
              "enum": [
                "centre",
                "center",
                "north",
                "south",
                "east",
                "west",
                "northeast",
                "northwest",
                "southeast",
                "southwest",
                "smart"
              ]
            }
          },
          {
            "name": "fp",
            "in": "query",
            "required": false,
            "description": "Focal point x,y (fractions 0..1) for fit=cover.",
            "schema": {
              "type": "string",
              "pattern": "^[01](\\.[0-9]+)?,[01](\\.[0-9]+)?$"
            }
          },
          {
            "name": "crop",
            "in": "query",
            "required": false,
            "description": "Rectangle x,y,w,h of the upright source cut before resizing: integers are pixels, numbers with a decimal point fractions.",
            "schema": {
              "type": "string",
              "pattern": "^[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+$"
            }
          },
          {
            "name": "bg",
            "in": "query",
            "required": false,
            "description": "Background RRGGBB or RRGGBBAA.",
            "schema": {
              "type": "string",
              "pattern": "^[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$"
            }
          },
          {
            "name": "enlarge",
            "in": "query",
            "required": false,
            "description": "Allow output larger than the source.",
            "schema": {
              "type": "string",
              "enum": [
                "0",
                "1",
                "true",
                "false"
              ]
            }
          },
          {
            "name": "format",
            "in": "query",
            "required": false,
            "description": "Output format; auto negotiates with Accept: JPEG XL when accepted and image.autoJXL is on, else AVIF when accepted and image.autoAVIF is on, else WebP when accepted, else JPEG (PNG with alpha). jxl outputs above image.jxlMaxPixels are a 422 (auto answers WebP instead).",
            "schema": {
              "type": "string",
              "enum": [
                "auto",
                "jpeg",
                "jpg",
                "png",
                "webp",
                "avif",
                "gif",
                "jxl"
              ]
            }
          },
          {
            "name": "q",
            "in": "query",
            "required": false,
            "description": "Encoder quality.",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 100
            }
          },
          {
            "name": "progressive",
            "in": "query",
            "required": false,
            "description": "Progressive JPEG.",
            "schema": {
              "type": "string",
              "enum": [
                "0",
                "1",
                "true",
                "false"
              ]
            }
          },
          {
            "name": "dpr",
            "in": "query",
            "required": false,
            "description": "Device pixel ratio; multiplies w and h.",
            "schema": {
              "type": "number",
              "minimum": 1,
              "maximum": 4
            }
          },
          {
            "name": "filter",
            "in": "query",
            "required": false,
            "description": "Comma-separated filter steps (blur:S, sharpen[:S], grayscale, sepia, brightness:F, contrast:F, rotate:90|180|270, flip, flop, round:R, circle, trim), at most 10.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "lqip",
            "in": "query",
            "required": false,
            "description": "A tiny blurred placeholder.",
            "schema": {
              "type": "string",
              "enum": [
                "0",
                "1",
                "true",
                "false"
              ]
            }
          },
          {
            "name": "max_bytes",
            "in": "query",
            "required": false,
            "description": "A byte budget for the output: JPEG, WebP and AVIF are encoded at lower qualities until they fit (at most 6 encodes, starting from q or the format's default; the quality chosen is in Server-Timing as quality;desc=N). PNG and GIF ignore it. When even the lowest quality tried is larger, the smallest encoding is answered (Server-Timing says N-over-max-bytes).",
            "schema": {
              "type": "integer",
              "minimum": 1024,
              "maximum": 10485760
            }
          },
          {
            "name": "colour",
            "in": "query",
            "required": false,
            "description": "srgb converts every source to sRGB (the default, image.colour). keep keeps a wide-gamut RGB source (Display P3, Adobe RGB: an ICC profile other than sRGB) in its own space and embeds its profile, the only metadata kept from the source, in JPEG, WebP, AVIF, PNG and JPEG XL output; GIF output, and sRGB, untagged, grey and CMYK sources, are as with srgb.",
            "schema": {
              "type": "string",
              "enum": [
                "srgb",
                "keep"
              ]
            }
          },
          {
            "name": "preset",
            "in": "query",
            "required": false,
            "description": "Named parameter sets from the configuration (presets.<name>), applied in order (a later preset's value wins), then this request's own parameters win. With http.presetsOnly the request may give only url and preset (anything else is a 400), and needs no signature. An unknown name is a 400.",
            "schema": {
              "type": "string",
              "pattern": "^[a-z0-9_-]{1,32}(,[a-z0-9_-]{1,32}){0,7}$"
            },
            "example": "thumb"
          },
          {
            "name": "wm",
            "in": "query",
            "required": false,
            "description": "A named overlay (watermark image) from the configuration (overlays.<name>: source, gravity, x, y, opacity, scale, tile), drawn after the filters on every frame. Its image is fetched and cached like a source; a digest of its bytes is part of the variant, so a new image makes a new ETag. An unknown name is a 400; a watermark image that cannot be fetched answers with that failure's status and a message naming the watermark image.",
            "schema": {
              "type": "string",
              "pattern": "^[a-z0-9_-]{1,32}$"
            }
          },
          {
            "name": "wmurl",
            "in": "query",
            "required": false,
            "description": "A per-request watermark image (absolute http(s) URL or s3://BUCKET/KEY), only when overlays.allowUrl is on (else a 400); it obeys the same address policy, allowlist and limits as sources. Placed as wm says when both are given, else at the bottom-right corner at its own size.",
            "schema": {
              "type": "string",
              "minLength": 1
            }
          },
          {
            "name": "text",
            "in": "query",
            "required": false,
            "description": "Text drawn over the output (after the watermark), literally (never as markup), in the configured font; only when overlays.allowText is on (else a 400). At most 200 characters, no control characters but line breaks; wrapped at the output's width and cut at its edges.",
            "schema": {
              "type": "string",
              "minLength": 1,
              "maxLength": 200
            }
          },
          {
            "name": "text_size",
            "in": "query",
            "required": false,
            "description": "Font size of text in pixels (needs text).",
            "schema": {
              "type": "integer",
              "minimum": 6,
              "maximum": 200,
              "default": 24
            }
          },
          {
            "name": "text_color",
            "in": "query",
            "required": false,
            "description": "Colour of text, RRGGBB or RRGGBBAA in hex (needs text).",
            "schema": {
              "type": "string",
              "pattern": "^#?([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$",
              "default": "ffffff"
            }
          },
          {
            "name": "text_g",
            "in": "query",
            "required": false,
            "description": "The edge or corner text sits against (needs text).",
            "schema": {
              "type": "string",
              "enum": [
                "centre",
                "center",
                "north",
                "south",
                "east",
                "west",
                "northeast",
                "northwest",
                "southeast",
                "southwest"
              ],
              "default": "southeast"
            }
          },
          {
            "name": "text_x",
            "in": "query",
            "required": false,
            "description": "Pixels in from the gravity's horizontal edge (needs text); at most image.maxDimension.",
            "schema": {
              "type": "integer",
              "minimum": 0,
              "maximum": 4096,
              "default": 0
            }
          },
          {
            "name": "text_y",
            "in": "query",
            "required": false,
            "description": "Pixels in from the gravity's vertical edge (needs text); at most image.maxDimension.",
            "schema": {
              "type": "integer",
              "minimum": 0,
              "maximum": 4096,
              "default": 0
            }
          },
          {
            "name": "text_opacity",
            "in": "query",
            "required": false,
            "description": "Opacity of text, 0..1 (needs text).",
            "schema": {
              "type": "number",
              "minimum": 0,
              "maximum": 1,
              "default": 1
            }
          },
          {
            "name": "sig",
            "in": "query",
            "required": false,
            "description": "Signature when signed URLs are on (security.signingKeys): base64url of HMAC-SHA256 of the path and query up to `&sig=`; must be the last parameter.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "If-None-Match",
            "in": "header",
            "required": false,
            "description": "ETag(s) of a copy the client holds: 304 when it matches.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "Save-Data",
            "in": "header",
            "required": false,
            "description": "on: lower quality when http.saveDataQuality is set and q is not given.",
            "schema": {
              "type": "string",
              "enum": [
                "on",
                "off"
              ]
            }
          },
          {
            "name": "Sec-CH-Width",
            "in": "header",
            "required": false,
            "description": "Client hint (http.clientHints): layout width in device pixels.",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 100000
            }
          },
          {
            "name": "Sec-CH-DPR",
            "in": "header",
            "required": false,
            "description": "Client hint (http.clientHints): device pixel ratio.",
            "schema": {
              "type": "number",
              "minimum": 0.1,
              "maximum": 10
            }
          },
          {
            "name": "Sec-CH-Viewport-Width",
            "in": "header",
            "required": false,
            "description": "Client hint (http.clientHints): viewport width in CSS pixels.",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 100000
            }
          }
        ],
        "responses": {
          "200": {
            "description": "The image.",
            "headers": {
              "ETag": {
                "description": "Strong entity tag of the variant.",
                "schema": {
                  "type": "string"
                }
              },
              "Last-Modified": {
                "description": "The origin's Last-Modified, else when the variant was made.",
                "schema": {
                  "type": "string"
                }
              },
              "Cache-Control": {
                "description": "public, max-age=N (and stale-while-revalidate, must-revalidate or no-cache as the origin asked), or no-store.",
                "schema": {
                  "type": "string"
                }
              },
              "Vary": {
                "description": "Request headers that chose the answer: Accept (format=auto), client hints, Save-Data, Origin.",
                "schema": {
                  "type": "string"
                }
              },
              "X-Cache": {
                "description": "Which tier answered.",
                "schema": {
                  "type": "string",
                  "enum": [
                    "memory",
                    "disk",
                    "miss"
                  ]
                }
              },
              "X-Request-Id": {
                "description": "The request id (the client's X-Request-Id when short and printable).",
                "schema": {
                  "type": "string"
                }
              },
              "Content-Disposition": {
                "description": "inline; filename=\"<source name>.<ext>\" (http.contentDisposition).",
                "schema": {
                  "type": "string"
                }
              },
              "Accept-CH": {
                "description": "Client hints the service reads (http.clientHints).",
                "schema": {
                  "type": "string"
                }
              },
              "Access-Control-Allow-Origin": {
                "description": "CORS (http.corsOrigins).",
                "schema": {
                  "type": "string"
                }
              }
            },
            "content": {
              "image/jpeg": {
                "schema": {
                  "type": "string",
                  "contentMediaType": "image/jpeg"
                }
              },
              "image/png": {
                "schema": {
                  "type": "string",
                  "contentMediaType": "image/png"
                }
              },
              "image/webp": {
                "schema": {
                  "type": "string",
                  "contentMediaType": "image/webp"
                }
              },
              "image/avif": {
                "schema": {
                  "type": "string",
                  "contentMediaType": "image/avif"
                }
              },
              "image/gif": {
                "schema": {
                  "type": "string",
                  "contentMediaType": "image/gif"
                }
              }
            }
          },
          "304": {
            "description": "If-None-Match matched.",
            "headers": {
              "ETag": {
                "description": "Strong entity tag of the variant.",
                "schema": {
                  "type": "string"
                }
              },
              "Cache-Control": {
                "description": "public, max-age=N (and stale-while-revalidate, must-revalidate or no-cache as the origin asked), or no-store.",
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "400": {
            "description": "A parameter is unknown, repeated, missing or out of range; the message names it.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "403": {
            "description": "Signature missing or wrong, or the source's address or host is refused.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "404": {
            "description": "The origin answered 404 or 410.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "413": {
            "description": "The source is larger than fetch.maxSourceBytes.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "415": {
            "description": "The source is not a supported image.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "422": {
            "description": "The image cannot be decoded, is too large in pixels, frames or memory, has too many scans, or crop lies outside it.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "502": {
            "description": "The origin failed (error status, refused connection, unknown host, too many redirects).",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "503": {
            "description": "Busy: queues full (Retry-After), memory budget busy, or a transform took too long.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "504": {
            "description": "The origin or the whole request took too long, or only-if-cached and not cached.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      },
      "head": {
        "operationId": "imageHead",
        "summary": "The headers of GET /img, without the body.",
        "parameters": [
          {
            "name": "url",
            "in": "query",
            "required": true,
            "description": "Absolute http(s) URL of the source image, or s3://BUCKET/KEY for an object in a listed bucket on the configured S3 endpoint (sources.s3.*), percent-encoded.",
            "schema": {
              "type": "string",
              "minLength": 1
            },
            "example": "https://images.example.com/photo.jpg"
          },
          {
            "name": "w",
            "in": "query",
            "required": false,
            "description": "Output box width (CSS pixels; times dpr), at most image.maxDimension.",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 4096
            }
          },
          {
            "name": "h",
            "in": "query",
            "required": false,
            "description": "Output box height.",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 4096
            }
          },
          {
            "name": "fit",
            "in": "query",
            "required": false,
            "description": "How the output fills the box.",
            "schema": {
              "type": "string",
              "enum": [
                "contain",
                "cover",
                "fill",
                "pad"
              ]
            }
          },
          {
            "name": "g",
            "in": "query",
            "required": false,
            "description": "Where fit=cover crops around.",
            "schema": {
              "type": "string",
              "enum": [
                "centre",
                "center",
                "north",
                "south",
                "east",
                "west",
                "northeast",
                "northwest",
                "southeast",
                "southwest",
                "smart"
              ]
            }
          },
          {
            "name": "fp",
            "in": "query",
            "required": false,
            "description": "Focal point x,y (fractions 0..1) for fit=cover.",
            "schema": {
              "type": "string",
              "pattern": "^[01](\\.[0-9]+)?,[01](\\.[0-9]+)?$"
            }
          },
          {
            "name": "crop",
            "in": "query",
            "required": false,
            "description": "Rectangle x,y,w,h of the upright source cut before resizing: integers are pixels, numbers with a decimal point fractions.",
            "schema": {
              "type": "string",
              "pattern": "^[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+$"
            }
          },
          {
            "name": "bg",
            "in": "query",
            "required": false,
            "description": "Background RRGGBB or RRGGBBAA.",
            "schema": {
              "type": "string",
              "pattern": "^[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$"
            }
          },
          {
            "name": "enlarge",
            "in": "query",
            "required": false,
            "description": "Allow output larger than the source.",
            "schema": {
              "type": "string",
              "enum": [
                "0",
                "1",
                "true",
                "false"
              ]
            }
          },
          {
            "name": "format",
            "in": "query",
            "required": false,
            "description": "Output format; auto negotiates with Accept: JPEG XL when accepted and image.autoJXL is on, else AVIF when accepted and image.autoAVIF is on, else WebP when accepted, else JPEG (PNG with alpha). jxl outputs above image.jxlMaxPixels are a 422 (auto answers WebP instead).",
            "schema": {
              "type": "string",
              "enum": [
                "auto",
                "jpeg",
                "jpg",
                "png",
                "webp",
                "avif",
                "gif",
                "jxl"
              ]
            }
          },
          {
            "name": "q",
            "in": "query",
            "required": false,
            "description": "Encoder quality.",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 100
            }
          },
          {
            "name": "progressive",
            "in": "query",
            "required": false,
            "description": "Progressive JPEG.",
            "schema": {
              "type": "string",
              "enum": [
                "0",
                "1",
                "true",
                "false"
              ]
            }
          },
          {
            "name": "dpr",
            "in": "query",
            "required": false,
            "description": "Device pixel ratio; multiplies w and h.",
            "schema": {
              "type": "number",
              "minimum": 1,
              "maximum": 4
            }
          },
          {
            "name": "filter",
            "in": "query",
            "required": false,
            "description": "Comma-separated filter steps (blur:S, sharpen[:S], grayscale, sepia, brightness:F, contrast:F, rotate:90|180|270, flip, flop, round:R, circle, trim), at most 10.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "lqip",
            "in": "query",
            "required": false,
            "description": "A tiny blurred placeholder.",
            "schema": {
              "type": "string",
              "enum": [
                "0",
                "1",
                "true",
                "false"
              ]
            }
          },
          {
            "name": "max_bytes",
            "in": "query",
            "required": false,
            "description": "A byte budget for the output: JPEG, WebP and AVIF are encoded at lower qualities until they fit (at most 6 encodes, starting from q or the format's default; the quality chosen is in Server-Timing as quality;desc=N). PNG and GIF ignore it. When even the lowest quality tried is larger, the smallest encoding is answered (Server-Timing says N-over-max-bytes).",
            "schema": {
              "type": "integer",
              "minimum": 1024,
              "maximum": 10485760
            }
          },
          {
            "name": "colour",
            "in": "query",
            "required": false,
            "description": "srgb converts every source to sRGB (the default, image.colour). keep keeps a wide-gamut RGB source (Display P3, Adobe RGB: an ICC profile other than sRGB) in its own space and embeds its profile, the only metadata kept from the source, in JPEG, WebP, AVIF, PNG and JPEG XL output; GIF output, and sRGB, untagged, grey and CMYK sources, are as with srgb.",
            "schema": {
              "type": "string",
              "enum": [
                "srgb",
                "keep"
              ]
            }
          },
          {
            "name": "preset",
            "in": "query",
            "required": false,
            "description": "Named parameter sets from the configuration (presets.<name>), applied in order (a later preset's value wins), then this request's own parameters win. With http.presetsOnly the request may give only url and preset (anything else is a 400), and needs no signature. An unknown name is a 400.",
            "schema": {
              "type": "string",
              "pattern": "^[a-z0-9_-]{1,32}(,[a-z0-9_-]{1,32}){0,7}$"
            },
            "example": "thumb"
          },
          {
            "name": "wm",
            "in": "query",
            "required": false,
            "description": "A named overlay (watermark image) from the configuration (overlays.<name>: source, gravity, x, y, opacity, scale, tile), drawn after the filters on every frame. Its image is fetched and cached like a source; a digest of its bytes is part of the variant, so a new image makes a new ETag. An unknown name is a 400; a watermark image that cannot be fetched answers with that failure's status and a message naming the watermark image.",
            "schema": {
              "type": "string",
              "pattern": "^[a-z0-9_-]{1,32}$"
            }
          },
          {
            "name": "wmurl",
            "in": "query",
            "required": false,
            "description": "A per-request watermark image (absolute http(s) URL or s3://BUCKET/KEY), only when overlays.allowUrl is on (else a 400); it obeys the same address policy, allowlist and limits as sources. Placed as wm says when both are given, else at the bottom-right corner at its own size.",
            "schema": {
              "type": "string",
              "minLength": 1
            }
          },
          {
            "name": "text",
            "in": "query",
            "required": false,
            "description": "Text drawn over the output (after the watermark), literally (never as markup), in the configured font; only when overlays.allowText is on (else a 400). At most 200 characters, no control characters but line breaks; wrapped at the output's width and cut at its edges.",
            "schema": {
              "type": "string",
              "minLength": 1,
              "maxLength": 200
            }
          },
          {
            "name": "text_size",
            "in": "query",
            "required": false,
            "description": "Font size of text in pixels (needs text).",
            "schema": {
              "type": "integer",
              "minimum": 6,
              "maximum": 200,
              "default": 24
            }
          },
          {
            "name": "text_color",
            "in": "query",
            "required": false,
            "description": "Colour of text, RRGGBB or RRGGBBAA in hex (needs text).",
            "schema": {
              "type": "string",
              "pattern": "^#?([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$",
              "default": "ffffff"
            }
          },
          {
            "name": "text_g",
            "in": "query",
            "required": false,
            "description": "The edge or corner text sits against (needs text).",
            "schema": {
              "type": "string",
              "enum": [
                "centre",
                "center",
                "north",
                "south",
                "east",
                "west",
                "northeast",
                "northwest",
                "southeast",
                "southwest"
              ],
              "default": "southeast"
            }
          },
          {
            "name": "text_x",
            "in": "query",
            "required": false,
            "description": "Pixels in from the gravity's horizontal edge (needs text); at most image.maxDimension.",
            "schema": {
              "type": "integer",
              "minimum": 0,
              "maximum": 4096,
              "default": 0
            }
          },
          {
            "name": "text_y",
            "in": "query",
            "required": false,
            "description": "Pixels in from the gravity's vertical edge (needs text); at most image.maxDimension.",
            "schema": {
              "type": "integer",
              "minimum": 0,
              "maximum": 4096,
              "default": 0
            }
          },
          {
            "name": "text_opacity",
            "in": "query",
            "required": false,
            "description": "Opacity of text, 0..1 (needs text).",
            "schema": {
              "type": "number",
              "minimum": 0,
              "maximum": 1,
              "default": 1
            }
          },
          {
            "name": "sig",
            "in": "query",
            "required": false,
            "description": "Signature when signed URLs are on (security.signingKeys): base64url of HMAC-SHA256 of the path and query up to `&sig=`; must be the last parameter.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "If-None-Match",
            "in": "header",
            "required": false,
            "description": "ETag(s) of a copy the client holds: 304 when it matches.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "Save-Data",
            "in": "header",
            "required": false,
            "description": "on: lower quality when http.saveDataQuality is set and q is not given.",
            "schema": {
              "type": "string",
              "enum": [
                "on",
                "off"
              ]
            }
          },
          {
            "name": "Sec-CH-Width",
            "in": "header",
            "required": false,
            "description": "Client hint (http.clientHints): layout width in device pixels.",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 100000
            }
          },
          {
            "name": "Sec-CH-DPR",
            "in": "header",
            "required": false,
            "description": "Client hint (http.clientHints): device pixel ratio.",
            "schema": {
              "type": "number",
              "minimum": 0.1,
              "maximum": 10
            }
          },
          {
            "name": "Sec-CH-Viewport-Width",
            "in": "header",
            "required": false,
            "description": "Client hint (http.clientHints): viewport width in CSS pixels.",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 100000
            }
          }
        ],
        "responses": {
          "200": {
            "description": "The image's headers.",
            "headers": {
              "ETag": {
                "description": "Strong entity tag of the variant.",
                "schema": {
                  "type": "string"
                }
              },
              "Last-Modified": {
                "description": "The origin's Last-Modified, else when the variant was made.",
                "schema": {
                  "type": "string"
                }
              },
              "Cache-Control": {
                "description": "public, max-age=N (and stale-while-revalidate, must-revalidate or no-cache as the origin asked), or no-store.",
                "schema": {
                  "type": "string"
                }
              },
              "Vary": {
                "description": "Request headers that chose the answer: Accept (format=auto), client hints, Save-Data, Origin.",
                "schema": {
                  "type": "string"
                }
              },
              "X-Cache": {
                "description": "Which tier answered.",
                "schema": {
                  "type": "string",
                  "enum": [
                    "memory",
                    "disk",
                    "miss"
                  ]
                }
              },
              "X-Request-Id": {
                "description": "The request id (the client's X-Request-Id when short and printable).",
                "schema": {
                  "type": "string"
                }
              },
              "Content-Disposition": {
                "description": "inline; filename=\"<source name>.<ext>\" (http.contentDisposition).",
                "schema": {
                  "type": "string"
                }
              },
              "Accept-CH": {
                "description": "Client hints the service reads (http.clientHints).",
                "schema": {
                  "type": "string"
                }
              },
              "Access-Control-Allow-Origin": {
                "description": "CORS (http.corsOrigins).",
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "304": {
            "description": "If-None-Match matched."
          },
          "400": {
            "description": "A parameter is unknown, repeated, missing or out of range; the message names it."
          },
          "403": {
            "description": "Signature missing or wrong, or the source's address or host is refused."
          },
          "404": {
            "description": "The origin answered 404 or 410."
          },
          "413": {
            "description": "The source is larger than fetch.maxSourceBytes."
          },
          "415": {
            "description": "The source is not a supported image."
          },
          "422": {
            "description": "The image cannot be decoded, is too large in pixels, frames or memory, has too many scans, or crop lies outside it."
          },
          "502": {
            "description": "The origin failed (error status, refused connection, unknown host, too many redirects)."
          },
          "503": {
            "description": "Busy: queues full (Retry-After), memory budget busy, or a transform took too long."
          },
          "504": {
            "description": "The origin or the whole request took too long, or only-if-cached and not cached."
          }
        }
      },
      "options": {
        "operationId": "imagePreflight",
        "summary": "CORS preflight (http.corsOrigins) or the allowed methods.",
        "parameters": [
          {
            "name": "Origin",
            "in": "header",
            "required": false,
            "description": "The page's origin.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "Access-Control-Request-Method",
            "in": "header",
            "required": false,
            "description": "The method the page will use.",
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "204": {
            "description": "Allowed methods (Allow), and for a listed origin the CORS headers.",
            "headers": {
              "Allow": {
                "description": "GET, HEAD, OPTIONS",
                "schema": {
                  "type": "string"
                }
              },
              "Access-Control-Allow-Origin": {
                "description": "The allowed origin or *.",
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    },
    "/info": {
      "get": {
        "operationId": "info",
        "summary": "Facts about a source for layout and placeholders.",
        "parameters": [
          {
            "name": "url",
            "in": "query",
            "required": true,
            "description": "Absolute http(s) URL of the source image, or s3://BUCKET/KEY for an object in a listed bucket on the configured S3 endpoint (sources.s3.*), percent-encoded.",
            "schema": {
              "type": "string",
              "minLength": 1
            },
            "example": "https://images.example.com/photo.jpg"
          },
          {
            "name": "sig",
            "in": "query",
            "required": false,
            "description": "Signature when signed URLs are on (security.signingKeys): base64url of HMAC-SHA256 of the path and query up to `&sig=`; must be the last parameter.",
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "The source's facts.",
            "headers": {
              "ETag": {
                "description": "Strong entity tag of the variant.",
                "schema": {
                  "type": "string"
                }
              },
              "Cache-Control": {
                "description": "public, max-age=N (and stale-while-revalidate, must-revalidate or no-cache as the origin asked), or no-store.",
                "schema": {
                  "type": "string"
                }
              }
            },
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": [
                    "width",
                    "height",
                    "format",
                    "has_alpha",
                    "frames",
                    "bytes",
                    "dominant_color",
                    "blurhash"
                  ],
                  "properties": {
                    "width": {
                      "type": "integer",
                      "minimum": 1
                    },
                    "height": {
                      "type": "integer",
                      "minimum": 1
                    },
                    "format": {
                      "type": "string"
                    },
                    "has_alpha": {
                      "type": "boolean"
                    },
                    "frames": {
                      "type": "integer",
                      "minimum": 1
                    },
                    "bytes": {
                      "type": "integer",
                      "minimum": 0
                    },
                    "dominant_color": {
                      "type": "string",
                      "pattern": "^#[0-9a-f]{6}$"
                    },
                    "blurhash": {
                      "type": "string"
                    }
                  }
                }
              }
            }
          },
          "304": {
            "description": "If-None-Match matched."
          },
          "400": {
            "description": "A parameter is unknown, repeated, missing or out of range; the message names it.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "403": {
            "description": "Signature missing or wrong, or the source's address or host is refused.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "404": {
            "description": "The origin answered 404 or 410.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "413": {
            "description": "The source is larger than fetch.maxSourceBytes.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "415": {
            "description": "The source is not a supported image.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "422": {
            "description": "The image cannot be decoded, is too large in pixels, frames or memory, has too many scans, or crop lies outside it.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "502": {
            "description": "The origin failed (error status, refused connection, unknown host, too many redirects).",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "503": {
            "description": "Busy: queues full (Retry-After), memory budget busy, or a transform took too long.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "504": {
            "description": "The origin or the whole request took too long, or only-if-cached and not cached.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    },
    "/prefetch": {
      "post": {
        "operationId": "prefetch",
        "summary": "Produce variants in the background at low priority.",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "type": "object",
                "required": [
                  "urls"
                ],
                "properties": {
                  "urls": {
                    "type": "array",
                    "maxItems": 100,
                    "items": {
                      "type": "string"
                    },
                    "description": "/img paths as a page would request them."
                  }
                }
              }
            }
          }
        },
        "responses": {
          "202": {
            "description": "Accepted; unparsable entries are listed.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": [
                    "accepted",
                    "rejected"
                  ],
                  "properties": {
                    "accepted": {
                      "type": "integer",
                      "minimum": 0
                    },
                    "rejected": {
                      "type": "array",
                      "items": {
                        "type": "object",
                        "required": [
                          "url",
                          "error"
                        ],
                        "properties": {
                          "url": {
                            "type": "string"
                          },
                          "error": {
                            "type": "string"
                          }
                        }
                      }
                    }
                  }
                }
              }
            }
          },
          "400": {
            "description": "The body is not JSON {\"urls\": [...]} or has more than 100 URLs.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "413": {
            "description": "The body is larger than 256 KiB.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    },
    "/health": {
      "get": {
        "operationId": "health",
        "summary": "Liveness: libvips encodes and decodes.",
        "responses": {
          "200": {
            "description": "ok",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "503": {
            "description": "libvips self-check failed",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    },
    "/ready": {
      "get": {
        "operationId": "ready",
        "summary": "Readiness: caches open, not shutting down.",
        "responses": {
          "200": {
            "description": "ready",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "503": {
            "description": "not ready",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    },
    "/metrics": {
      "get": {
        "operationId": "metrics",
        "summary": "Prometheus text format (on metrics.bind instead, when set).",
        "responses": {
          "200": {
            "description": "Metrics.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    },
    "/": {
      "get": {
        "operationId": "statusRoot",
        "summary": "The status page.",
        "responses": {
          "200": {
            "description": "HTML.",
            "content": {
              "text/html": {
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    },
    "/status": {
      "get": {
        "operationId": "status",
        "summary": "The status page, with an optional try-it source.",
        "parameters": [
          {
            "name": "url",
            "in": "query",
            "required": false,
            "description": "A source to show beside its variant.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "w",
            "in": "query",
            "required": false,
            "description": "The try-it width.",
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "HTML.",
            "content": {
              "text/html": {
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    },
    "/status/live": {
      "get": {
        "operationId": "statusLive",
        "summary": "The status page's changing part (figures and charts).",
        "responses": {
          "200": {
            "description": "An HTML fragment.",
            "content": {
              "text/html": {
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    },
    "/cache": {
      "delete": {
        "operationId": "purge",
        "summary": "Purge a source and its variants (url), or everything (all=1).",
        "security": [
          {
            "adminToken": []
          }
        ],
        "parameters": [
          {
            "name": "url",
            "in": "query",
            "required": false,
            "description": "The source to purge.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "all",
            "in": "query",
            "required": false,
            "description": "Purge everything.",
            "schema": {
              "type": "string",
              "enum": [
                "1"
              ]
            }
          }
        ],
        "responses": {
          "200": {
            "description": "How many entries went.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": [
                    "purged"
                  ],
                  "properties": {
                    "purged": {
                      "type": "integer",
                      "minimum": 0
                    }
                  }
                }
              }
            }
          },
          "400": {
            "description": "Neither url nor all=1, both, or a bad url.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "401": {
            "description": "The admin token is missing or wrong.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "404": {
            "description": "No admin token is configured (cache.adminToken).",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    },
    "/cache/stats": {
      "get": {
        "operationId": "cacheStats",
        "summary": "Entries, bytes and hit ratios per tier.",
        "security": [
          {
            "adminToken": []
          }
        ],
        "responses": {
          "200": {
            "description": "Per tier.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "additionalProperties": {
                    "type": "object",
                    "required": [
                      "entries",
                      "bytes",
                      "capacityBytes",
                      "hits",
                      "misses",
                      "hitRatio"
                    ],
                    "properties": {
                      "entries": {
                        "type": "integer"
                      },
                      "bytes": {
                        "type": "integer"
                      },
                      "capacityBytes": {
                        "type": "integer"
                      },
                      "hits": {
                        "type": "integer"
                      },
                      "misses": {
                        "type": "integer"
                      },
                      "hitRatio": {
                        "type": "number"
                      }
                    }
                  }
                }
              }
            }
          },
          "401": {
            "description": "The admin token is missing or wrong.",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "404": {
            "description": "No admin token is configured (cache.adminToken).",
            "content": {
              "text/plain": {
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    },
    "/favicon.ico": {
      "get": {
        "operationId": "favicon",
        "summary": "No icon (so browsers log no error).",
        "responses": {
          "204": {
            "description": "No content."
          }
        }
      }
    },
    "/openapi.json": {
      "get": {
        "operationId": "openapi",
        "summary": "This document.",
        "responses": {
          "200": {
            "description": "OpenAPI 3.1.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object"
                }
              }
            }
          }
        }
      }
    }
  },
  "components": {
    "securitySchemes": {
      "adminToken": {
        "type": "http",
        "scheme": "bearer",
        "description": "cache.adminToken"
      }
    }
  }
}

"""#
}
