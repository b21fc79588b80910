// libFuzzer target for the image-request intake: every value a request brings (query parameters,
// client-hint and Save-Data headers, Accept) through the code that turns it into an `ImageRequest`, its
// hints and its variant key (Sources/ImageCore/Request/*.swift, compiled here with the real SHA-256),
// and the memory-hit front's framing checks (Sources/ProxyServer/FastPath/RawRequestHead.swift). Built with
// swiftc -sanitize=fuzzer,address by fuzz/run.sh. A trap anywhere (an overflowing conversion or
// arithmetic) is a crash libFuzzer reports; besides, it checks that a parsed request stays within the
// documented ranges whatever the hints say.
//
// Input layout: lines. The first is the query string (`name=value&...`, percent-encoded); each further
// line is a header `Name: value`. The same bytes are also framed as a raw request head.

import Foundation

/// Limits with presets and overlays (URL and text allowed), so that `preset`, `wm`, `wmurl` and `text_*`
/// are parsed too.
let fuzzLimits: ImageRequest.Limits = {
    let presets = try! PresetTable(definitions: ["a": "w=10&fit=cover", "b": "format=webp&wm=logo", "c": "text=hi&text_size=30"])
    var placement = OverlayPlacement()
    placement.opacity = 0.5
    let overlays = OverlayCatalog(
        definitions: ["logo": .init(source: try! SourceURL(parsing: "https://example.com/logo.png"), placement: placement)],
        allowURL: true, allowText: true)
    return ImageRequest.Limits(maxDimension: 4096, presets: presets, overlays: overlays)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestIntake(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: count)
    _ = RawRequestHead.frame(bytes, maxHeadBytes: 16384)
    for start in [0, count / 2, count] { _ = RawRequestHead.mayDecideFraming(bytes, newFrom: start) }

    let text = String(decoding: bytes, as: UTF8.self)
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard !lines.isEmpty else { return 0 }
    let queryLine = lines.removeFirst()
    var headers: [String: String] = [:]
    for line in lines {
        guard let colon = line.firstIndex(of: ":") else { continue }
        let name = line[..<colon].lowercased()
        headers[name] = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
    }
    let query: [(name: String, value: String)] = queryLine.split(separator: "&").map { pair in
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        func decoded(_ part: Substring) -> String { String(part).removingPercentEncoding ?? String(part) }
        return (decoded(parts[0]), parts.count > 1 ? decoded(parts[1]) : "")
    }
    let limits = fuzzLimits
    guard var request = try? ImageRequest(query: query, limits: limits) else { return 0 }
    let hints = ClientHints(header: { headers[$0.lowercased()] })
    if let dpr = hints.dpr { precondition(ClientHints.dprRange.contains(dpr), "a DPR hint within its range") }
    for policy in [ClientHints.Policy(clientHints: true, saveDataQuality: 40), .none] {
        var adapted = request
        _ = adapted.adapt(to: hints, policy: policy, limits: limits)
        precondition((adapted.width ?? 1) >= 1 && (adapted.width ?? 1) <= limits.maxDimension, "width within 1...maxDimension")
        precondition((adapted.height ?? 1) >= 1 && (adapted.height ?? 1) <= limits.maxDimension, "height within 1...maxDimension")
        precondition(adapted.pixelRatio >= 1 && adapted.pixelRatio <= 4, "pixel ratio within 1...4")
        request = adapted
    }
    for allowAVIF in [true, false] {
        let (choice, _) = request.formatChoice(accept: headers["accept"], allowAVIF: allowAVIF)
        precondition(request.variantKey(choice: choice, overlayIdentity: "x").hex.utf8.count == 64, "a variant key is 64 hex digits")
        if let text = request.text {
            precondition(!text.markup.contains("<") && TextOverlay.sizeRange.contains(text.size), "text is escaped and sized")
        }
    }
    return 0
}
