import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac, webcrypto } from "node:crypto";
import {
  createNextLoader, imagePath, imageURL, imgproxyPath, imgproxyURL, presetForWidth, responsiveImage, sign, signedImageURL, thumborPath,
  thumborURL,
} from "../index.js";

const source = "https://example.com/photos/a b.jpg?v=2";

test("paths encode the source and write options in a fixed order", () => {
  assert.equal(imagePath(source), "/img?url=https%3A%2F%2Fexample.com%2Fphotos%2Fa%20b.jpg%3Fv%3D2");
  const path = imagePath(source, {
    quality: 70, width: 300, format: "webp", fit: "cover", height: 200, filters: ["grayscale", "round:20"],
    focalPoint: [0.3, 0.6], crop: [0, 0, "0.5", "1.0"], background: "#ff0000", enlarge: true, progressive: false,
  });
  assert.equal(
    path,
    "/img?url=https%3A%2F%2Fexample.com%2Fphotos%2Fa%20b.jpg%3Fv%3D2&w=300&h=200&fit=cover&fp=0.3%2C0.6"
      + "&crop=0%2C0%2C0.5%2C1.0&format=webp&q=70&bg=ff0000&enlarge=1&filter=grayscale%2Cround%3A20",
  );
  assert.equal(imageURL("https://img.example.com/", source, { width: 10 }), "https://img.example.com" + imagePath(source, { width: 10 }));
});

test("s3 sources and size targets", () => {
  assert.equal(imagePath("s3://images/a b.jpg", { width: 300, maxBytes: 20000 }), "/img?url=s3%3A%2F%2Fimages%2Fa%20b.jpg&w=300&max_bytes=20000");
});

test("bad input is refused with a message", () => {
  assert.throws(() => imagePath("/relative.jpg"), /absolute http\(s\) URL/);
  assert.throws(() => imagePath(source, { widht: 3 }), /unknown option widht/);
  assert.throws(() => responsiveImage({ base: "", source, widths: [] }), /non-empty/);
});

test("signatures are the server's: base64url HMAC-SHA256 of path and query", async () => {
  const path = imagePath(source, { width: 300 });
  const expected = createHmac("sha256", "secret").update(path).digest("base64url");
  assert.equal(await sign(path, "secret", { subtle: webcrypto.subtle }), `${path}&sig=${expected}`);
  const url = await signedImageURL("https://img.example.com", source, { width: 300 }, "secret", { subtle: webcrypto.subtle });
  assert.equal(url, `https://img.example.com${path}&sig=${expected}`);
  await assert.rejects(sign(path, "", { subtle: webcrypto.subtle }), /signing key is required/);
});

test("srcset has one candidate per width, smallest first, and sizes", async () => {
  const image = responsiveImage({ base: "https://i.test", source, widths: [640, 320, 320, 1280], sizes: "(max-width: 600px) 100vw, 50vw", options: { format: "auto" } });
  assert.equal(image.src, "https://i.test" + imagePath(source, { format: "auto", width: 320 }));
  assert.deepEqual(image.srcset.split(", ").map((candidate) => candidate.split(" ")[1]), ["320w", "640w", "1280w"]);
  assert.equal(image.sizes, "(max-width: 600px) 100vw, 50vw");
  const signed = await responsiveImage({ base: "https://i.test", source, widths: [100, 200], key: "k", subtle: webcrypto.subtle });
  for (const candidate of signed.srcset.split(", ")) assert.match(candidate, /&sig=[A-Za-z0-9_-]{43} \d+w$/);
});

test("the Next.js loader makes absolute sources and passes width and quality", () => {
  const loader = createNextLoader({ base: "https://img.example.com", sourceBase: "https://www.example.com", options: { fit: "contain" } });
  assert.equal(
    loader({ src: "/hero.jpg", width: 828, quality: 75 }),
    "https://img.example.com/img?url=https%3A%2F%2Fwww.example.com%2Fhero.jpg&w=828&fit=contain&format=auto&q=75",
  );
  assert.equal(
    loader({ src: "https://cdn.example.org/x.png", width: 64 }),
    "https://img.example.com/img?url=https%3A%2F%2Fcdn.example.org%2Fx.png&w=64&fit=contain&format=auto",
  );
});

test("presets: written first, and a Next.js loader that names only presets", () => {
  assert.equal(imagePath(source, { width: 60, preset: ["thumb", "webp"] }),
    "/img?url=https%3A%2F%2Fexample.com%2Fphotos%2Fa%20b.jpg%3Fv%3D2&preset=thumb%2Cwebp&w=60");
  const presets = { "next-1080": 1080, "next-640": 640, "next-828": 828 };
  assert.equal(presetForWidth(presets, 700), "next-828");
  assert.equal(presetForWidth(presets, 640), "next-640");
  assert.equal(presetForWidth(presets, 3840), "next-1080", "the widest when none is wide enough");
  const loader = createNextLoader({ base: "https://img.example.com", sourceBase: "https://www.example.com", presets });
  assert.equal(loader({ src: "/hero.jpg", width: 750, quality: 75 }),
    "https://img.example.com/img?url=https%3A%2F%2Fwww.example.com%2Fhero.jpg&preset=next-828");
  assert.throws(() => createNextLoader({ base: "", presets: {} }), /at least one preset/);
});

test("faces: a crop around them and their redaction", () => {
  assert.equal(imagePath("https://example.com/a.jpg", { width: 300, height: 300, fit: "cover", gravity: "face", filters: ["redact_faces:pixelate"] }),
    "/img?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300&h=300&fit=cover&g=face&filter=redact_faces%3Apixelate");
});

test("JPEG XL and wide gamut", () => {
  assert.equal(imagePath("https://example.com/a.jpg", { width: 300, format: "jxl", colour: "keep", watermark: "logo" }),
    "/img?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300&format=jxl&colour=keep&wm=logo");
});

test("watermarks and text overlays", () => {
  assert.equal(
    imagePath("https://example.com/a.jpg", { width: 300, watermark: "logo", text: "© Example & Co", textColor: "#ffffffcc", textGravity: "southwest", textSize: 18 }),
    "/img?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300&wm=logo&text=%C2%A9%20Example%20%26%20Co&text_size=18&text_color=ffffffcc&text_g=southwest",
  );
});

test("imgproxy URLs are signed as imgproxy's own examples sign them", async () => {
  // imgproxy's examples/signature.py: this key, salt and path (the signature computed here independently).
  const key = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881";
  const salt = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5";
  const subtle = webcrypto.subtle;
  const url = await imgproxyURL("https://img.example.com", "http://img.example.com/pretty/image.jpg", { width: 300, height: 300 }, { key, salt, subtle });
  const path = "/rs:fit:300:300:0/plain/http%3A%2F%2Fimg.example.com%2Fpretty%2Fimage.jpg";
  const expected = createHmac("sha256", Buffer.from(key, "hex")).update(Buffer.concat([Buffer.from(salt, "hex"), Buffer.from(path)])).digest("base64url");
  assert.equal(url, `https://img.example.com/${expected}${path}`);
  const short = await imgproxyURL("https://img.example.com", "http://img.example.com/pretty/image.jpg", { width: 300, height: 300 }, { key, salt, signatureSize: 8, subtle });
  assert.equal(short, `https://img.example.com/${Buffer.from(expected, "base64url").subarray(0, 8).toString("base64url")}${path}`);
  assert.equal(imgproxyPath("http://a.example/x.jpg", { resizingType: "fill", width: 10, gravity: "sm", format: "webp" }),
    "/rs:fill:10:0:0/g:sm/plain/http%3A%2F%2Fa.example%2Fx.jpg@webp");
  assert.equal(await imgproxyURL("", "http://a.example/x.jpg"), "/insecure/rs:fit:0:0:0/plain/http%3A%2F%2Fa.example%2Fx.jpg");
});

test("thumbor URLs are signed as libthumbor signs them", async () => {
  // libthumbor's known URL: key "my-security-key", 300x200 of my.server.com/some/path/to/image.jpg.
  const url = await thumborURL("http://my.server.com", "my.server.com/some/path/to/image.jpg", { width: 300, height: 200 },
    { securityKey: "my-security-key", subtle: webcrypto.subtle });
  assert.equal(url, "http://my.server.com/8ammJH8D-7tXy6kU3lTvoXlhu4o=/300x200/my.server.com/some/path/to/image.jpg");
  assert.equal(thumborPath("a.example/x.jpg", { fitIn: true, width: 300, flipVertically: true, halign: "left", smart: true, filters: ["quality(80)"] }),
    "fit-in/300x-0/left/smart/filters:quality(80)/a.example/x.jpg");
  assert.equal(await thumborURL("", "a.example/x.jpg"), "/unsafe/a.example/x.jpg");
});
