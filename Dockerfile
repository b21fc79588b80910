# ImageProxy container image: Swift 6.3 build on Debian 12, slim Debian 12 runtime, for linux/amd64 and
# linux/arm64 (both base images are published for both; nothing here names an architecture).
# Build: docker build -t imageproxy .   (both: docker buildx build --platform linux/amd64,linux/arm64 -t imageproxy .)
# Run: docker run -p 8080:8080 -v ipx-cache:/var/cache/imageproxy -e IMAGEPROXY_SIGNING_KEY=... imageproxy

FROM swift:6.3-bookworm AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends libvips-dev libwebp-dev libgif-dev liblcms2-dev libjpeg62-turbo-dev libexif-dev libdeflate-dev libxml2-dev libopencv-objdetect-dev opencv-data libcurl4-openssl-dev libsqlite3-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
# The build plugin embeds api/openapi.json (the OpenAPI document's one source) in the binary.
COPY Plugins ./Plugins
COPY api ./api
# Package.swift names the test-support target by its path (Tests/TestSupport): the package does not load
# without the folder, though the binary does not build it.
COPY Tests ./Tests
RUN swift build -c release --static-swift-stdlib --product ImageProxy \
    && install -D -m 0755 "$(swift build -c release --show-bin-path)/ImageProxy" /out/ImageProxy

FROM debian:bookworm-slim
# Runtime libraries only; keep in step with `ldd ImageProxy` (checked in .ci/run).
RUN apt-get update \
    && apt-get install -y --no-install-recommends libvips42 libwebpdemux2 libwebpmux3 libgif7 liblcms2-2 libjpeg62-turbo libexif12 libdeflate0 libxml2 librsvg2-2 libopencv-objdetect406 opencv-data libcurl4 libsqlite3-0 ca-certificates fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 imageproxy \
    && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin imageproxy \
    && install -d -o imageproxy -g imageproxy /var/cache/imageproxy
COPY --from=build /out/ImageProxy /usr/local/bin/ImageProxy
COPY config/imageproxy.yaml /etc/imageproxy/imageproxy.yaml
# Listening on 0.0.0.0 needs a signing key or a source allowlist (else the start is refused: an open proxy).
# Give one at run time, never in the image: -e IMAGEPROXY_SIGNING_KEY=... or
# -e IMAGEPROXY_SECURITY_ALLOWED_HOSTS=images.example.com (deploy/README.md).
ENV IMAGEPROXY_BIND=0.0.0.0:8080 \
    IMAGEPROXY_CACHE_DIR=/var/cache/imageproxy
VOLUME ["/var/cache/imageproxy"]
USER 10001:10001
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=3s --start-period=5s --retries=3 \
    CMD ["/usr/local/bin/ImageProxy", "probe", "http://127.0.0.1:8080/health"]
ENTRYPOINT ["/usr/local/bin/ImageProxy"]
CMD ["serve", "--config", "/etc/imageproxy/imageproxy.yaml"]
