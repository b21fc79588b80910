#!/usr/bin/env bash
# The package's layers (docs/architecture.md): ImageCore ← ProxyEngine ← ProxyServer ← ImageProxy. Fails when a
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

# Rooms a newcomer can name (issue #58): no Sources folder holds more than 18 files, no Swift file under
# Sources more than 300 lines, except where a file is better whole (each exception says why).
python3 - <<'PY'
import os, sys
max_files, max_lines = 18, 300
whole = {}
whole_files = {
    "Sources/ProxyEngine/Queue/TransformMemoryBudget.swift": "one state machine as a value type: its states and transitions read together",
    "Sources/ProxyEngine/Pipeline/ImagePipeline.swift": "the request path from key to variant, in the order a miss takes it",
    "Sources/ProxyEngine/Cache/DiskCache.swift": "one actor over one SQLite index: every statement beside the state it guards",
    "Sources/ProxyEngine/Cache/Shared/SharedTier.swift": "one actor: the shared tier's reads, writes and breaker together",
    "Sources/ProxyEngine/Metrics/ProxyMetrics.swift": "every metric object, created once, in one list",
}
failed = False
for folder, _, files in os.walk("Sources"):
    count = len([name for name in files if not name.startswith(".")])
    if count > max_files and folder not in whole:
        print(f"check-layers: {folder} holds {count} files (at most {max_files}): split it into rooms", file=sys.stderr)
        failed = True
    for name in files:
        path = os.path.join(folder, name)
        if name.endswith(".swift") and path not in whole_files:
            lines = sum(1 for _ in open(path, encoding="utf-8"))
            if lines > max_lines:
                print(f"check-layers: {path} has {lines} lines (at most {max_lines})", file=sys.stderr)
                failed = True
for path in list(whole) + list(whole_files):
    if not os.path.exists(path):
        print(f"check-layers: {path} is listed as better whole but does not exist", file=sys.stderr)
        failed = True
if failed:
    sys.exit(1)
print("check-layers: rooms ok")
PY
