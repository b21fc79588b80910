// Against the real binary (IMAGEPROXY_BINARY, set by the Swift test suite's ClientLibraryTests) and a
// local origin on 127.0.0.1: a URL signed by this client gets 200, a tampered one 403.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { webcrypto } from "node:crypto";
import { createNextLoader, imagePath, imgproxyURL, responsiveImage, signedImageURL, thumborURL } from "../index.js";

const binary = process.env.IMAGEPROXY_BINARY;
const photo = readFileSync(new URL("../../fixtures/photo.jpg", import.meta.url));

async function startOrigin() {
  const server = createServer((request, response) => {
    if (request.url === "/photo.jpg") {
      response.writeHead(200, { "content-type": "image/jpeg" });
      response.end(photo);
    } else {
      response.writeHead(404);
      response.end();
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

async function startProxy(environment, args = []) {
  const child = spawn(binary, args, {
    env: { PATH: "/usr/bin:/bin", IMAGEPROXY_BIND: "127.0.0.1:0", ...environment },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let output = "";
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line: ${output}`)), 20000);
    child.stderr.on("data", (chunk) => {
      output += chunk;
      const match = /listening on 127\.0\.0\.1:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${output}`)));
  });
  return { child, port };
}

test("a URL signed by this client is served by the real binary", { skip: !binary && "IMAGEPROXY_BINARY not set" }, async () => {
  const cache = mkdtempSync(join(tmpdir(), "imageproxy-js-"));
  const origin = await startOrigin();
  const key = "js-client-key";
  const proxy = await startProxy({
    IMAGEPROXY_CACHE_DIR: cache, IMAGEPROXY_ALLOW_LOOPBACK_SOURCES: "true", IMAGEPROXY_SIGNING_KEY: key,
  });
  try {
    const base = `http://127.0.0.1:${proxy.port}`;
    const source = `http://127.0.0.1:${origin.address().port}/photo.jpg`;
    const subtle = webcrypto.subtle;
    const url = await signedImageURL(base, source, { width: 48, format: "png" }, key, { subtle });
    const answer = await fetch(url);
    assert.equal(answer.status, 200, await answer.clone().text());
    assert.equal(answer.headers.get("content-type"), "image/png");
    const bytes = new Uint8Array(await answer.arrayBuffer());
    assert.deepEqual([...bytes.slice(1, 4)], [0x50, 0x4e, 0x47], "a PNG");
    assert.equal((bytes[16] << 24) | (bytes[17] << 16) | (bytes[18] << 8) | bytes[19], 48, "48 pixels wide");

    const unsigned = await fetch(base + imagePath(source, { width: 48, format: "png" }));
    assert.equal(unsigned.status, 403);
    const tampered = await fetch(url.replace("w=48", "w=49"));
    assert.equal(tampered.status, 403);

    const image = await responsiveImage({ base, source, widths: [32, 64], options: { format: "webp" }, key, subtle });
    for (const candidate of image.srcset.split(", ")) {
      const response = await fetch(candidate.split(" ")[0]);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("content-type"), "image/webp");
    }
  } finally {
    proxy.child.kill("SIGTERM");
    origin.close();
    rmSync(cache, { recursive: true, force: true });
  }
});

test("the Next.js loader with presets works keyless against a presets-only server", { skip: !binary && "IMAGEPROXY_BINARY not set" }, async () => {
  const cache = mkdtempSync(join(tmpdir(), "imageproxy-js-"));
  const config = join(cache, "presets.yaml");
  writeFileSync(config, 'http:\n  presetsOnly: true\npresets:\n  next-32: "w=32&format=png"\n  next-64: "w=64&format=png"\n');
  const origin = await startOrigin();
  const proxy = await startProxy({
    IMAGEPROXY_CACHE_DIR: join(cache, "cache"), IMAGEPROXY_ALLOW_LOOPBACK_SOURCES: "true", IMAGEPROXY_SIGNING_KEY: "server-only-key",
  }, ["--config", config]);
  try {
    const base = `http://127.0.0.1:${proxy.port}`;
    const loader = createNextLoader({ base, presets: { "next-32": 32, "next-64": 64 } });
    const source = `http://127.0.0.1:${origin.address().port}/photo.jpg`;
    const answer = await fetch(loader({ src: source, width: 48, quality: 75 }));
    assert.equal(answer.status, 200, await answer.clone().text());
    const bytes = new Uint8Array(await answer.arrayBuffer());
    assert.equal((bytes[16] << 24) | (bytes[17] << 16) | (bytes[18] << 8) | bytes[19], 64, "next-64: 64 pixels wide");
    const other = await fetch(base + imagePath(source, { width: 48 }));
    assert.equal(other.status, 400, "presets-only refuses w");
  } finally {
    proxy.child.kill("SIGTERM");
    origin.close();
    rmSync(cache, { recursive: true, force: true });
  }
});

test("imgproxy and thumbor URLs made by this client are served by the real binary", { skip: !binary && "IMAGEPROXY_BINARY not set" }, async () => {
  const cache = mkdtempSync(join(tmpdir(), "imageproxy-js-"));
  const origin = await startOrigin();
  const key = "6a73";
  const salt = "636c69656e74";
  const proxy = await startProxy({
    IMAGEPROXY_CACHE_DIR: cache, IMAGEPROXY_ALLOW_LOOPBACK_SOURCES: "true",
    IMAGEPROXY_COMPAT_IMGPROXY_ENABLED: "true", IMAGEPROXY_COMPAT_IMGPROXY_PREFIX: "/ip", IMGPROXY_KEY: key, IMGPROXY_SALT: salt,
    IMAGEPROXY_COMPAT_THUMBOR_ENABLED: "true", IMAGEPROXY_COMPAT_THUMBOR_PREFIX: "/th", IMAGEPROXY_COMPAT_THUMBOR_SECURITY_KEY: "thumbor-key",
  });
  try {
    const base = `http://127.0.0.1:${proxy.port}`;
    const source = `http://127.0.0.1:${origin.address().port}/photo.jpg`;
    const subtle = webcrypto.subtle;
    const width = (bytes) => (bytes[16] << 24) | (bytes[17] << 16) | (bytes[18] << 8) | bytes[19];
    const imgproxy = await imgproxyURL(base + "/ip", source, { width: 24, format: "png" }, { key, salt, subtle });
    const answer = await fetch(imgproxy);
    assert.equal(answer.status, 200, await answer.clone().text());
    assert.equal(width(new Uint8Array(await answer.arrayBuffer())), 24);
    assert.equal((await fetch(await imgproxyURL(base + "/ip", source, { width: 24 }))).status, 403, "insecure while keys are set");

    const image = source.replace("http://", "");
    const thumbor = await thumborURL(base + "/th", image, { width: 20, fitIn: true, filters: ["format(png)"] }, { securityKey: "thumbor-key", subtle });
    const other = await fetch(thumbor);
    assert.equal(other.status, 200, await other.clone().text());
    assert.equal(width(new Uint8Array(await other.arrayBuffer())), 20);
    assert.equal((await fetch(await thumborURL(base + "/th", image, { width: 20 }))).status, 403, "unsafe/ while not allowed");
  } finally {
    proxy.child.kill("SIGTERM");
    origin.close();
    rmSync(cache, { recursive: true, force: true });
  }
});
