// ImageProxy client: builds /img URLs from options, signs them (HMAC-SHA256 with Web Crypto, as the
// server checks them), makes srcset/sizes for a list of widths, and a loader for Next.js next/image.
// ESM, no runtime dependencies; runs in browsers, Node >= 18, Deno, Bun and edge runtimes.

/** Option names and the query parameters they become, in the order they are written. */
const PARAMETERS = [
  ["preset", "preset"], ["width", "w"], ["height", "h"], ["fit", "fit"], ["gravity", "g"], ["focalPoint", "fp"], ["crop", "crop"],
  ["format", "format"], ["quality", "q"], ["dpr", "dpr"], ["background", "bg"], ["enlarge", "enlarge"],
  ["progressive", "progressive"], ["filters", "filter"], ["lqip", "lqip"], ["maxBytes", "max_bytes"], ["colour", "colour"],
  ["watermark", "wm"], ["watermarkURL", "wmurl"], ["text", "text"], ["textSize", "text_size"], ["textColor", "text_color"],
  ["textGravity", "text_g"], ["textX", "text_x"], ["textY", "text_y"], ["textOpacity", "text_opacity"],
];

function parameterValue(name, value) {
  if (typeof value === "boolean") return value ? "1" : "0";
  if (Array.isArray(value)) return value.join(",");
  if ((name === "background" || name === "textColor") && typeof value === "string") return value.replace(/^#/, "");
  return String(value);
}

/**
 * The path and query of an /img request: `/img?url=<source>&w=...`. Parameters are written in a fixed
 * order, so one set of options always gives one URL (one cache entry, one signature).
 * @param {string} source absolute http(s) URL of the source image, or `s3://bucket/key` (an object on the
 *   server's S3 endpoint, in a bucket it lists)
 * @param {import("./index.js").ImageOptions} [options]
 * @returns {string}
 */
export function imagePath(source, options = {}) {
  if (typeof source !== "string" || !/^(https?|s3):\/\//i.test(source)) {
    throw new TypeError(`source must be an absolute http(s) URL or s3://bucket/key, got ${JSON.stringify(source)}`);
  }
  const known = new Set(PARAMETERS.map(([name]) => name));
  for (const name of Object.keys(options)) {
    if (!known.has(name)) throw new TypeError(`unknown option ${name}`);
  }
  let path = `/img?url=${encodeURIComponent(source)}`;
  for (const [name, parameter] of PARAMETERS) {
    const value = options[name];
    if (value === undefined || value === null || value === false) continue;
    path += `&${parameter}=${encodeURIComponent(parameterValue(name, value))}`;
  }
  return path;
}

/** `base` without a trailing slash, joined to a path. */
function join(base, path) {
  return (base ?? "").replace(/\/+$/, "") + path;
}

/**
 * A full /img URL (unsigned): `base` is where ImageProxy is served, e.g. `https://img.example.com`.
 * @returns {string}
 */
export function imageURL(base, source, options = {}) {
  return join(base, imagePath(source, options));
}

function base64url(bytes) {
  let binary = "";
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Signs a path and query as the server checks it: appends `&sig=` + base64url(HMAC-SHA256(key, pathAndQuery)).
 * Keep the key on servers and in builds: anyone holding it can make the proxy fetch any source.
 * @param {string} pathAndQuery e.g. from {@link imagePath}
 * @param {string} key the signing key (`IMAGEPROXY_SIGNING_KEY`)
 * @param {{subtle?: SubtleCrypto}} [crypto] Web Crypto to use; `globalThis.crypto.subtle` by default
 *   (Node 18: pass `(await import("node:crypto")).webcrypto.subtle`)
 * @returns {Promise<string>}
 */
export async function sign(pathAndQuery, key, { subtle } = {}) {
  const engine = subtle ?? globalThis.crypto?.subtle;
  if (!engine) throw new Error("Web Crypto is not available: pass { subtle }");
  if (!key) throw new TypeError("a signing key is required");
  const encoder = new TextEncoder();
  const cryptoKey = await engine.importKey("raw", encoder.encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await engine.sign("HMAC", cryptoKey, encoder.encode(pathAndQuery));
  return `${pathAndQuery}&sig=${base64url(mac)}`;
}

/**
 * A full, signed /img URL.
 * @returns {Promise<string>}
 */
export async function signedImageURL(base, source, options, key, crypto) {
  return join(base, await sign(imagePath(source, options), key, crypto));
}

/**
 * `srcset` and `sizes` for an <img>: one candidate per width (`url 320w, url 640w, ...`), the smallest as
 * `src` (the fallback). With `key`, every candidate is signed (then it returns a Promise).
 * @param {{base: string, source: string, widths: number[], sizes?: string, options?: object, key?: string, subtle?: SubtleCrypto}} spec
 * @returns {{src: string, srcset: string, sizes: string} | Promise<{src: string, srcset: string, sizes: string}>}
 */
export function responsiveImage({ base, source, widths, sizes = "100vw", options = {}, key, subtle }) {
  if (!Array.isArray(widths) || widths.length === 0) throw new TypeError("widths must be a non-empty array");
  const sorted = [...new Set(widths.map((width) => Math.round(width)))].sort((a, b) => a - b);
  const paths = sorted.map((width) => imagePath(source, { ...options, width }));
  const assemble = (urls) => ({
    src: urls[0],
    srcset: urls.map((url, index) => `${url} ${sorted[index]}w`).join(", "),
    sizes,
  });
  if (!key) return assemble(paths.map((path) => join(base, path)));
  return Promise.all(paths.map(async (path) => join(base, await sign(path, key, { subtle })))).then(assemble);
}

/**
 * The preset for a width: the narrowest whose width is at least `width`, else the widest.
 * @param {Record<string, number>} presets preset name -> the width it makes
 * @param {number} width
 * @returns {string}
 */
export function presetForWidth(presets, width) {
  const entries = Object.entries(presets ?? {});
  if (entries.length === 0) throw new TypeError("presets must name at least one preset and its width");
  entries.sort((a, b) => a[1] - b[1]);
  const fitting = entries.find(([, presetWidth]) => presetWidth >= width);
  return (fitting ?? entries[entries.length - 1])[0];
}

/**
 * A loader for Next.js `next/image` (`images.loader: "custom"`, `loaderFile`), for deployments without
 * signed URLs (a loader runs in the browser too, where no key may be): `({src, width, quality}) => url`.
 * Relative `src` is resolved against `sourceBase` (your site), since ImageProxy fetches absolute URLs.
 *
 * With `presets` (name -> the width it makes, e.g. `{"next-640": 640, "next-1080": 1080}`), each URL
 * names only a preset, the narrowest at least as wide as Next.js asks for: that works against a server
 * in presets-only mode (`http.presetsOnly: true`), where strangers cannot ask for other variants and no
 * signature is needed. Define the same presets (with those `w`) in the server's configuration.
 * @param {{base: string, sourceBase?: string, format?: string, options?: object, presets?: Record<string, number>}} settings
 * @returns {(props: {src: string, width: number, quality?: number}) => string}
 */
export function createNextLoader({ base, sourceBase, format = "auto", options = {}, presets }) {
  if (presets !== undefined) presetForWidth(presets, 0);
  return function imageProxyLoader({ src, width, quality }) {
    const source = /^(https?|s3):\/\//i.test(src) ? src : new URL(src, sourceBase).toString();
    if (presets !== undefined) return imageURL(base, source, { preset: presetForWidth(presets, width) });
    return imageURL(base, source, { ...options, width, quality, format });
  };
}

// The URL dialects the server also answers when they are on (compat.imgproxy, compat.thumbor): for pages
// that keep their imgproxy or thumbor URLs, and for moving them over one template at a time.

function hexBytes(hex) {
  if (!/^([0-9a-fA-F]{2})+$/.test(hex)) throw new TypeError("imgproxy keys and salts are hex");
  return Uint8Array.from(hex.match(/../g), (pair) => parseInt(pair, 16));
}

async function hmac(hash, key, message, subtle) {
  const engine = subtle ?? globalThis.crypto?.subtle;
  if (!engine) throw new Error("Web Crypto is not available: pass { subtle }");
  const cryptoKey = await engine.importKey("raw", key, { name: "HMAC", hash }, false, ["sign"]);
  return new Uint8Array(await engine.sign("HMAC", cryptoKey, message));
}

/**
 * The path of an imgproxy URL after its signature: `/rs:fit:300:200:0/g:ce/.../plain/<source>@<ext>`.
 * Options: resizingType (fit, fill, fill-down, force, auto), width, height, enlarge, gravity (no, so, ea, we,
 * noea, nowe, soea, sowe, ce, sm), quality, format, and `advanced`: further `name:args` segments as they are.
 */
export function imgproxyPath(source, { resizingType = "fit", width = 0, height = 0, enlarge = false, gravity, quality, format, advanced = [] } = {}) {
  const segments = [`rs:${resizingType}:${width}:${height}:${enlarge ? 1 : 0}`];
  if (gravity) segments.push(`g:${gravity}`);
  if (quality) segments.push(`q:${quality}`);
  segments.push(...advanced);
  return `/${segments.join("/")}/plain/${encodeURIComponent(source)}${format ? "@" + format : ""}`;
}

/**
 * A full imgproxy URL, signed as imgproxy signs (HMAC-SHA256 of salt + path, hex key and salt, the digest cut
 * to `signatureSize` bytes), or `insecure` without a key.
 * @returns {Promise<string>}
 */
export async function imgproxyURL(base, source, options = {}, { key, salt, signatureSize = 32, subtle } = {}) {
  const path = imgproxyPath(source, options);
  if (!key) return join(base, "/insecure" + path);
  const salted = new Uint8Array([...hexBytes(salt ?? ""), ...new TextEncoder().encode(path)]);
  const mac = await hmac("SHA-256", hexBytes(key), salted, subtle);
  return join(base, "/" + base64url(mac.slice(0, signatureSize)) + path);
}

/**
 * The path of a thumbor URL after its signature: `[fit-in/][-]WxH/[halign/][valign/][smart/][filters:.../]<image>`.
 * Options: width, height, fitIn, flipHorizontally, flipVertically, halign (left, right), valign (top, bottom),
 * smart, filters (e.g. ["quality(80)", "format(webp)"]).
 */
export function thumborPath(image, { width = 0, height = 0, fitIn = false, flipHorizontally = false, flipVertically = false, halign, valign, smart = false, filters = [] } = {}) {
  const parts = [];
  if (fitIn) parts.push("fit-in");
  if (width || height || flipHorizontally || flipVertically) parts.push(`${flipHorizontally ? "-" : ""}${width}x${flipVertically ? "-" : ""}${height}`);
  if (halign && halign !== "center") parts.push(halign);
  if (valign && valign !== "middle") parts.push(valign);
  if (smart) parts.push("smart");
  if (filters.length) parts.push("filters:" + filters.join(":"));
  parts.push(image);
  return parts.join("/");
}

/**
 * A full thumbor URL, signed as libthumbor signs (HMAC-SHA1 of the path, URL-safe base64 with padding), or
 * `unsafe` without a key.
 * @returns {Promise<string>}
 */
export async function thumborURL(base, image, options = {}, { securityKey, subtle } = {}) {
  const path = thumborPath(image, options);
  if (!securityKey) return join(base, "/unsafe/" + path);
  const encoder = new TextEncoder();
  const mac = await hmac("SHA-1", encoder.encode(securityKey), encoder.encode(path), subtle);
  const signature = base64url(mac);
  return join(base, "/" + signature + "=".repeat((4 - (signature.length % 4)) % 4) + "/" + path);
}
