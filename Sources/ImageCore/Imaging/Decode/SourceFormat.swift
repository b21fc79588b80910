/// An image format recognised from its first bytes (Content-Type is never trusted).
public enum SourceFormat: String, Sendable, CaseIterable {
    case jpeg, png, webp, gif, avif, heic, jxl
    /// SVG, a vector source rendered into pixels (`image.allowSVGInput`), never answered as SVG.
    case svg

    /// Sniffs the magic bytes; nil when the bytes are no supported image.
    public init?(sniffing bytes: some Collection<UInt8>) {
        let head = Array(bytes.prefix(32))
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + magic.count && Array(head[offset..<offset + magic.count]) == magic
        }
        if starts([0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) {
            self = .gif
        } else if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) {
            self = .webp
        } else if starts([0xFF, 0x0A]) || starts([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) {
            self = .jxl  // a bare codestream, or the ISOBMFF container's signature box
        } else if starts(Array("ftyp".utf8), at: 4), head.count >= 12 {
            let brand = String(decoding: head[8..<12], as: UTF8.self)
            switch brand {
            case "avif", "avis": self = .avif
            case "heic", "heix", "mif1", "msf1", "heim", "heis", "hevc": self = .heic
            default: return nil
            }
        } else if Self.looksLikeSVG(bytes) {
            self = .svg
        } else {
            return nil
        }
    }

    /// How far into the bytes `<svg` is looked for (libvips' own sniffer looks at the first 1000 bytes; an
    /// XML declaration, a DOCTYPE and an editor's comments come first in many files).
    static let svgSniffBytes = 4096

    /// Text that starts (after a UTF-8 byte-order mark and white space) with `<` and holds `<svg` within
    /// ``svgSniffBytes``: an XML declaration, a comment, a DOCTYPE or the root itself.
    static func looksLikeSVG(_ bytes: some Collection<UInt8>) -> Bool {
        var index = bytes.startIndex
        var seen = 0
        // A byte-order mark, then white space.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = bytes.index(index, offsetBy: 3)
            seen = 3
        }
        while index != bytes.endIndex, seen < svgSniffBytes, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) {
            index = bytes.index(after: index)
            seen += 1
        }
        guard index != bytes.endIndex, bytes[index] == UInt8(ascii: "<") else { return false }
        let window = Array(bytes[index...].prefix(svgSniffBytes - seen))
        let marker = Array("<svg".utf8)
        guard window.count >= marker.count else { return false }
        for start in 0...(window.count - marker.count) where window[start] == marker[0] {
            if Array(window[start..<start + marker.count]) == marker { return true }
        }
        return false
    }
}
