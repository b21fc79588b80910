/// An image format recognised from its first bytes (Content-Type is never trusted).
public enum SourceFormat: String, Sendable, CaseIterable {
    case jpeg, png, webp, gif, avif, heic, jxl

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
        } else {
            return nil
        }
    }
}
