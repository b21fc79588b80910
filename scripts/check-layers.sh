#!/usr/bin/env bash
# The package's layers (README, Layout): ImageCore ← ProxyEngine ← ProxyServer ← ImageProxy. Fails when a
# target declares a dependency on a layer above it, or on a web framework it must not know: ImageCore
# knows no HTTP (Hummingbird, NIO, HTTP types) and ProxyEngine no Hummingbird. Also fails when a file
# imports a module its target does not declare (the toolchain's own modules aside), and when a target
# declares one none of its files imports: dependencies are exactly what the code uses. The test targets
# and their support target are held to the same rule.
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
    "ImageCore": {"ProxyEngine", "ProxyServer", "ImageProxy", "Hummingbird", "HummingbirdCore", "HTTPTypes",
                  "NIOHTTPTypes", "NIOCore", "NIOPosix", "NIOHTTP1", "GRDB", "Configuration", "CCurlShim"},
    "ProxyEngine": {"ProxyServer", "ImageProxy", "Hummingbird", "HummingbirdCore", "NIOHTTPTypes", "NIOHTTP1",
                    "Configuration", "Yams"},
    "ProxyServer": {"ImageProxy"},
}
failed = False
for target, refused in forbidden.items():
    wrong = names(target) & refused
    if wrong:
        print(f"check-layers: {target} depends on {sorted(wrong)}, above or beside its layer", file=sys.stderr)
        failed = True
    print(f"check-layers: {target} -> {sorted(names(target))}")
import os, re
system = {"Foundation", "FoundationXML", "FoundationNetworking", "FoundationEssentials", "Dispatch", "Glibc", "Darwin",
          "Synchronization", "Testing", "XCTest"}
pattern = re.compile(r"^(?:@testable |@preconcurrency |@_exported )*import (?:class |struct |enum |func )?([A-Za-z_][A-Za-z0-9_]*)", re.M)
checked = ["ImageCore", "ProxyEngine", "ProxyServer", "ImageProxy", "TestSupport", "ImageCoreTests", "ProxyEngineTests",
           "ProxyServerTests"]
for target in checked:
    declared = names(target)
    used = set()
    default = "Tests" if targets[target]["type"] == "test" else "Sources"
    for folder, _, files in os.walk(targets[target].get("path") or os.path.join(default, target)):
        for name in files:
            if not name.endswith(".swift"):
                continue
            path = os.path.join(folder, name)
            text = open(path, encoding="utf-8").read()
            for module in pattern.findall(text):
                used.add(module)
                if module not in declared and module not in system:
                    print(f"check-layers: {path} imports {module}, which {target} does not declare", file=sys.stderr)
                    failed = True
    for unused in sorted(declared - used):
        print(f"check-layers: {target} declares {unused} but no file of it imports it", file=sys.stderr)
        failed = True
sys.exit(1 if failed else 0)
'
echo "check-layers: ok"
