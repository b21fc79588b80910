// libFuzzer target for the memory-hit framing parser (Sources/ProxyCore/FastPath/RawRequestHead.swift),
// compiled with it alone: swiftc -sanitize=fuzzer,address (fuzz/run.sh). Besides memory safety it checks
// what the connection handler relies on: a framed request lies within the bytes and the head limit,
// framing is a pure function of the bytes, and a complete request framed as a memory-hit candidate is a
// GET of /img over HTTP/1.1.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRawRequestHead(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: count)
    for limit in [32, 1024, 16384] {
        let framing = RawRequestHead.frame(bytes, maxHeadBytes: limit)
        precondition(framing == RawRequestHead.frame(bytes, maxHeadBytes: limit), "framing is deterministic")
        switch framing {
        case .candidate(let head, let length):
            precondition(length > 0 && length <= count && length <= limit, "candidate within the bytes and the limit")
            precondition(head.path.hasPrefix("/img?"), "only /img requests are candidates")
            precondition(bytes.starts(with: "GET ".utf8), "only GET requests are candidates")
        case .ordinary(let length):
            precondition(length > 0 && length <= count && length <= limit, "request within the bytes and the limit")
        case .incomplete:
            precondition(count <= limit, "an incomplete head is never past the limit")
        case .unframed, .tooLarge:
            break
        }
    }
    return 0
}
