/// Edits HEIF files libvips wrote (tests only): adds an `irot` rotation to the primary item, which
/// libvips' saver does not write, moving the media data's offsets in `iloc` by what the `meta` box grew.
enum HEIFBoxes {
    struct Box {
        var type: String
        var start: Int
        var size: Int
        /// Where its payload (after the header, and a full box's version and flags) begins.
        var payload: Int
        var end: Int { start + size }
    }

    struct Malformed: Error {}

    static let fullBoxes: Set<String> = ["meta", "pitm", "iloc", "ipma", "iinf", "iref", "hdlr"]

    static func be(_ bytes: [UInt8], _ at: Int, _ count: Int) -> Int {
        (0..<count).reduce(0) { $0 << 8 | Int(bytes[at + $1]) }
    }

    static func put(_ value: Int, into bytes: inout [UInt8], at: Int, count: Int) {
        for index in 0..<count { bytes[at + index] = UInt8((value >> (8 * (count - 1 - index))) & 0xFF) }
    }

    static func children(_ bytes: [UInt8], from: Int, to: Int) throws -> [Box] {
        var boxes: [Box] = []
        var offset = from
        while offset + 8 <= to {
            let size = be(bytes, offset, 4)
            guard size >= 8, offset + size <= to else { throw Malformed() }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            boxes.append(Box(type: type, start: offset, size: size, payload: offset + 8 + (fullBoxes.contains(type) ? 4 : 0)))
            offset += size
        }
        return boxes
    }

    static func box(_ type: String, size: Int, payload: [UInt8]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 4)
        put(size, into: &bytes, at: 0, count: 4)
        return bytes + Array(type.utf8) + payload
    }

    /// The file with the primary item rotated by `quarterTurns` × 90° anticlockwise (`irot`, essential).
    static func rotated(_ file: [UInt8], quarterTurns: UInt8) throws -> [UInt8] {
        try adding(property: "irot", payload: [quarterTurns & 3], to: file)
    }

    /// The file with the primary item mirrored (`imir`, essential; axis 0 or 1).
    static func mirrored(_ file: [UInt8], axis: UInt8) throws -> [UInt8] {
        try adding(property: "imir", payload: [axis & 1], to: file)
    }

    /// The file with a transformative property added to the primary item (essential).
    static func adding(property type: String, payload: [UInt8], to file: [UInt8]) throws -> [UInt8] {
        let top = try children(file, from: 0, to: file.count)
        guard let meta = top.first(where: { $0.type == "meta" }) else { throw Malformed() }
        let inMeta = try children(file, from: meta.payload, to: meta.end)
        guard let pitm = inMeta.first(where: { $0.type == "pitm" }), let iprp = inMeta.first(where: { $0.type == "iprp" }),
            let iloc = inMeta.first(where: { $0.type == "iloc" })
        else { throw Malformed() }
        let primary = file[pitm.start + 8] == 0 ? be(file, pitm.payload, 2) : be(file, pitm.payload, 4)
        let inIprp = try children(file, from: iprp.payload, to: iprp.end)
        guard let ipco = inIprp.first(where: { $0.type == "ipco" }), let ipma = inIprp.first(where: { $0.type == "ipma" }) else {
            throw Malformed()
        }
        // ipco gains the irot property, the last one.
        let properties = try children(file, from: ipco.payload, to: ipco.end)
        let added = box(type, size: 8 + payload.count, payload: payload)
        let newIpco = box("ipco", size: ipco.size + added.count, payload: Array(file[ipco.payload..<ipco.end]) + added)
        let propertyIndex = properties.count + 1
        // ipma: the primary item's list of associations gains it (essential).
        let version = Int(file[ipma.start + 8]), flags = be(file, ipma.start + 9, 3)
        let wide = flags & 1 == 1
        var body = Array(file[(ipma.start + 8)..<(ipma.start + 12)])
        var offset = ipma.payload
        let entries = be(file, offset, 4)
        body += file[offset..<(offset + 4)]
        offset += 4
        for _ in 0..<entries {
            let idSize = version < 1 ? 2 : 4
            let item = be(file, offset, idSize)
            let count = Int(file[offset + idSize])
            let associationSize = wide ? 2 : 1
            let associations = Array(file[(offset + idSize + 1)..<(offset + idSize + 1 + count * associationSize)])
            body += file[offset..<(offset + idSize)]
            if item == primary {
                body.append(UInt8(count + 1))
                body += associations
                body += wide ? [UInt8(0x80 | (propertyIndex >> 8)), UInt8(propertyIndex & 0xFF)] : [UInt8(0x80 | propertyIndex)]
            } else {
                body.append(UInt8(count))
                body += associations
            }
            offset += idSize + 1 + count * associationSize
        }
        let newIpma = box("ipma", size: 8 + body.count, payload: body)
        var newIprpPayload: [UInt8] = []
        for child in inIprp {
            switch child.type {
            case "ipco": newIprpPayload += newIpco
            case "ipma": newIprpPayload += newIpma
            default: newIprpPayload += file[child.start..<child.end]
            }
        }
        let newIprp = box("iprp", size: 8 + newIprpPayload.count, payload: newIprpPayload)
        let growth = newIprp.count - iprp.size
        // iloc: file offsets into the media data after `meta` move by `growth`.
        var newIloc = Array(file[iloc.start..<iloc.end])
        let ilocVersion = Int(file[iloc.start + 8])
        var cursor = 12
        let sizes = be(newIloc, cursor, 2)
        let offsetSize = sizes >> 12 & 0xF, lengthSize = sizes >> 8 & 0xF, baseOffsetSize = sizes >> 4 & 0xF
        let indexSize = ilocVersion >= 1 ? sizes & 0xF : 0
        cursor += 2
        let itemCount = ilocVersion < 2 ? be(newIloc, cursor, 2) : be(newIloc, cursor, 4)
        cursor += ilocVersion < 2 ? 2 : 4
        for _ in 0..<itemCount {
            cursor += ilocVersion < 2 ? 2 : 4
            var method = 0
            if ilocVersion >= 1 {
                method = be(newIloc, cursor, 2) & 0xF
                cursor += 2
            }
            cursor += 2  // data_reference_index
            let baseAt = cursor
            let base = baseOffsetSize > 0 ? be(newIloc, cursor, baseOffsetSize) : 0
            cursor += baseOffsetSize
            let extents = be(newIloc, cursor, 2)
            cursor += 2
            if method == 0 && baseOffsetSize > 0 && base >= meta.end {
                put(base + growth, into: &newIloc, at: baseAt, count: baseOffsetSize)
            }
            for _ in 0..<extents {
                cursor += indexSize
                let extentOffset = offsetSize > 0 ? be(newIloc, cursor, offsetSize) : 0
                if method == 0 && offsetSize > 0 && (baseOffsetSize == 0 || base < meta.end) && base + extentOffset >= meta.end {
                    put(extentOffset + growth, into: &newIloc, at: cursor, count: offsetSize)
                }
                cursor += offsetSize + lengthSize
            }
        }
        var newMetaPayload = Array(file[(meta.start + 8)..<meta.payload])
        for child in inMeta {
            switch child.type {
            case "iprp": newMetaPayload += newIprp
            case "iloc": newMetaPayload += newIloc
            default: newMetaPayload += file[child.start..<child.end]
            }
        }
        let newMeta = box("meta", size: 8 + newMetaPayload.count, payload: newMetaPayload)
        return Array(file[0..<meta.start]) + newMeta + Array(file[meta.end...])
    }
}
