#!/usr/bin/env bash
# The package's layers (README, Layout): ImageCore ← ProxyEngine ← ProxyCore ← ImageProxy. Fails when a
# target declares a dependency on a layer above it, or on a web framework it must not know: ImageCore
# knows no HTTP (Hummingbird, NIO, HTTP types) and ProxyEngine no Hummingbird.
set -euo pipefail
cd "$(dirname "$0")/.."
swift package dump-package | python3 -c '
import json, sys
targets = {t["name"]: t for t in json.load(sys.stdin)["targets"]}
def names(target):
    out = set()
    for dependency in targets[target]["dependencies"]:
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                out.add(dependency[kind][0])
    return out
forbidden = {
    "ImageCore": {"ProxyEngine", "ProxyCore", "ImageProxy", "Hummingbird", "HummingbirdCore", "HTTPTypes",
                  "NIOHTTPTypes", "NIOCore", "NIOPosix", "NIOHTTP1", "GRDB", "Configuration", "CCurlShim"},
    "ProxyEngine": {"ProxyCore", "ImageProxy", "Hummingbird", "HummingbirdCore", "NIOHTTPTypes", "NIOHTTP1",
                    "Configuration", "Yams"},
    "ProxyCore": {"ImageProxy"},
}
failed = False
for target, refused in forbidden.items():
    wrong = names(target) & refused
    if wrong:
        print(f"check-layers: {target} depends on {sorted(wrong)}, above or beside its layer", file=sys.stderr)
        failed = True
    print(f"check-layers: {target} -> {sorted(names(target))}")
sys.exit(1 if failed else 0)
'
echo "check-layers: ok"
