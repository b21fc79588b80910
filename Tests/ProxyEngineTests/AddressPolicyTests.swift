import Testing

@testable import ImageCore
@testable import ProxyEngine

@Suite struct AddressPolicyTests {
    private func classOf(_ text: String) throws -> AddressPolicy.AddressClass {
        AddressPolicy.classify(try #require(IPAddress(text), "\(text) parses"))
    }

    @Test func classifiesIPv4() throws {
        #expect(try classOf("93.184.216.34") == .publicUnicast)
        #expect(try classOf("8.8.8.8") == .publicUnicast)
        #expect(try classOf("127.0.0.1") == .loopback)
        #expect(try classOf("127.255.0.9") == .loopback)
        #expect(try classOf("10.1.2.3") == .privateNetwork)
        #expect(try classOf("172.16.0.1") == .privateNetwork)
        #expect(try classOf("172.31.255.255") == .privateNetwork)
        #expect(try classOf("172.32.0.1") == .publicUnicast)
        #expect(try classOf("192.168.1.1") == .privateNetwork)
        #expect(try classOf("169.254.169.254") == .linkLocal)
        #expect(try classOf("0.0.0.0") == .unspecified)
        #expect(try classOf("100.64.0.1") == .sharedCGNAT)
        #expect(try classOf("224.0.0.1") == .multicast)
        #expect(try classOf("240.0.0.1") == .reserved)
        #expect(try classOf("255.255.255.255") == .reserved)
    }

    @Test func classifiesIPv6AndEmbeddedIPv4() throws {
        #expect(try classOf("2606:4700::1111") == .publicUnicast)
        #expect(try classOf("::1") == .loopback)
        #expect(try classOf("::") == .unspecified)
        #expect(try classOf("fd00::1") == .privateNetwork)
        #expect(try classOf("fe80::1%eth0") == .linkLocal)
        #expect(try classOf("ff02::1") == .multicast)
        #expect(try classOf("::ffff:127.0.0.1") == .loopback)
        #expect(try classOf("::ffff:7f00:1") == .loopback)
        #expect(try classOf("::ffff:10.0.0.1") == .privateNetwork)
        #expect(try classOf("::127.0.0.1") == .loopback)
        #expect(try classOf("64:ff9b::7f00:1") == .reserved)
        #expect(try classOf("2002:7f00:1::") == .reserved)
        #expect(try classOf("2001:0:4136:e378::1") == .reserved)
    }

    @Test func switchesAllowOnlyTheirClasses() throws {
        let closed = AddressPolicy()
        let open = AddressPolicy(allowLoopback: true, allowPrivate: true)
        for text in ["127.0.0.1", "::1", "10.0.0.1", "169.254.169.254", "fe80::1"] {
            #expect(!closed.permits(try #require(IPAddress(text))), "\(text)")
            #expect(open.permits(try #require(IPAddress(text))), "\(text)")
        }
        for text in ["0.0.0.0", "::", "100.64.1.1", "224.0.0.1"] {
            #expect(!open.permits(try #require(IPAddress(text))), "\(text)")
        }
        #expect(closed.permits(try #require(IPAddress("93.184.216.34"))))
        #expect(AddressPolicy(allowLoopback: true).permits(try #require(IPAddress("127.0.0.1"))))
        #expect(!AddressPolicy(allowLoopback: true).permits(try #require(IPAddress("10.0.0.1"))))
    }

    @Test func rejectsMalformedAddresses() {
        for text in ["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1::2::3", "12345::", "g::1"] {
            #expect(IPAddress(text) == nil, "\(text)")
        }
    }
}
