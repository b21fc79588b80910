import ImageCore

/// Decides, at connect time, whether a resolved address may be fetched from (the SSRF guard).
///
/// Public unicast addresses are allowed; every other class is refused unless switched on: loopback and
/// private (with link-local) by their own settings, any class by name in `extraClasses`.
/// IPv4 carried inside IPv6 (mapped, compatible) is judged as the IPv4 address it carries.
public struct AddressPolicy: Sendable, Equatable {
    /// Allow 127.0.0.0/8 and ::1.
    public var allowLoopback: Bool
    /// Allow 10/8, 172.16/12, 192.168/16, fc00::/7 and link-local 169.254/16, fe80::/10.
    public var allowPrivate: Bool
    /// Further classes allowed (`allow.addressClasses`).
    public var extraClasses: Set<AddressClass>

    public init(allowLoopback: Bool = false, allowPrivate: Bool = false, extraClasses: Set<AddressClass> = []) {
        self.allowLoopback = allowLoopback
        self.allowPrivate = allowPrivate
        self.extraClasses = extraClasses
    }

    /// The class of an address, as far as this policy cares.
    public enum AddressClass: String, Sendable, CaseIterable {
        case publicUnicast, loopback, privateNetwork, linkLocal, unspecified, sharedCGNAT, multicast, reserved
    }

    /// Whether a connection to `address` is allowed.
    public func permits(_ address: IPAddress) -> Bool {
        let addressClass = Self.classify(address)
        if extraClasses.contains(addressClass) { return true }
        return switch addressClass {
        case .publicUnicast: true
        case .loopback: allowLoopback
        case .privateNetwork, .linkLocal: allowPrivate
        case .unspecified, .sharedCGNAT, .multicast, .reserved: false
        }
    }

    /// Classifies an address.
    public static func classify(_ address: IPAddress) -> AddressClass {
        if let v4 = address.embeddedV4 { return classifyV4(v4) }
        switch address {
        case .v4(let value):
            return classifyV4(value)
        case .v6(let bytes):
            if bytes.allSatisfy({ $0 == 0 }) { return .unspecified }
            if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return .loopback }
            if bytes[0] & 0xfe == 0xfc { return .privateNetwork }
            if bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80 { return .linkLocal }
            if bytes[0] == 0xfe && bytes[1] & 0xc0 == 0xc0 { return .privateNetwork }  // deprecated site-local
            if bytes[0] == 0xff { return .multicast }
            // NAT64 (64:ff9b::/96), 6to4 (2002::/16) and Teredo (2001::/32) tunnel to IPv4 targets.
            if bytes[0] == 0x00 && bytes[1] == 0x64 && bytes[2] == 0xff && bytes[3] == 0x9b { return .reserved }
            if bytes[0] == 0x20 && bytes[1] == 0x02 { return .reserved }
            if bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0 && bytes[3] == 0 { return .reserved }
            if bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0x0d && bytes[3] == 0xb8 { return .reserved }
            if bytes[0] & 0xe0 != 0x20 { return .reserved }  // outside global unicast 2000::/3
            return .publicUnicast
        }
    }

    private static func classifyV4(_ value: UInt32) -> AddressClass {
        func inRange(_ base: UInt32, _ prefix: UInt32) -> Bool {
            let mask: UInt32 = prefix == 0 ? 0 : ~UInt32(0) << (32 - prefix)
            return value & mask == base & mask
        }
        let a: UInt32 = 1 << 24, b: UInt32 = 1 << 16, c: UInt32 = 1 << 8
        if inRange(0, 8) { return .unspecified }
        if inRange(127 * a, 8) { return .loopback }
        if inRange(10 * a, 8) || inRange(172 * a + 16 * b, 12) || inRange(192 * a + 168 * b, 16) { return .privateNetwork }
        if inRange(169 * a + 254 * b, 16) { return .linkLocal }
        if inRange(100 * a + 64 * b, 10) { return .sharedCGNAT }
        if inRange(224 * a, 4) { return .multicast }
        if inRange(240 * a, 4) { return .reserved }
        if inRange(192 * a, 24) || inRange(192 * a + 2 * c, 24) || inRange(198 * a + 51 * b + 100 * c, 24)
            || inRange(203 * a + 0 * b + 113 * c, 24) || inRange(198 * a + 18 * b, 15) || inRange(192 * a + 88 * b + 99 * c, 24)
        {
            return .reserved
        }
        return .publicUnicast
    }
}
