import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// Client hints and Save-Data through the real server, pipeline and libvips: what they change, what
/// explicit parameters keep, and what the answers say they vary on.
@Suite(.timeLimit(.minutes(2))) struct ClientHintTests {
    static func width(_ response: TestResponse) throws -> Int {
        try VipsImage.decode(Array(response.body.readableBytesView)).width
    }

    static func vary(_ response: TestResponse) -> [String] {
        (response.headers[.vary] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    @Test func hintsChooseTheWidthOnlyWhereTheQueryDoesNot() async throws {
        let photo = try TestImages.jpeg(width: 2400, height: 1600)
        try await withFixtures(["/p.jpg": .jpeg(photo)], configure: { $0.http.clientHints = true }) { proxy, base, _ in
            let url = ("url", base + "/p.jpg")
            // Sec-CH-Width is in device pixels, rounded up to a step (500 -> 640).
            let hinted = try await proxy.image([url, ("format", "png")], headers: [.secCHWidth: "500"])
            #expect(hinted.status == .ok)
            #expect(try Self.width(hinted) == 640)
            #expect(Self.vary(hinted) == ["Sec-CH-Width", "Width", "Sec-CH-Viewport-Width", "Viewport-Width", "Sec-CH-DPR", "DPR"])
            #expect(hinted.headers[.acceptCH] == ClientHints.acceptCH)
            // The legacy name works too; a width above every step gets the largest (capped by the source).
            #expect(try Self.width(await proxy.image([url, ("format", "png")], headers: [.width: "700"])) == 750)
            // Viewport-Width (CSS px) times the DPR hint: 400 x 2 = 800 -> 828.
            let viewport = try await proxy.image([url, ("format", "png")], headers: [.secCHViewportWidth: "400", .secCHDPR: "2"])
            #expect(try Self.width(viewport) == 828)
            // Explicit w: the width hint is ignored, the DPR hint multiplies (2.6 rounds up to 3).
            let explicit = try await proxy.image([url, ("w", "300"), ("format", "png")], headers: [.secCHWidth: "1000", .dpr: "2.6"])
            #expect(try Self.width(explicit) == 900)
            #expect(Self.vary(explicit) == ["Sec-CH-DPR", "DPR"])
            // Explicit w and dpr: nothing is read, nothing varies (format fixed, so not even Accept).
            let fixed = try await proxy.image(
                [url, ("w", "300"), ("dpr", "1"), ("format", "png")], headers: [.secCHWidth: "1000", .secCHDPR: "3"])
            #expect(try Self.width(fixed) == 300)
            #expect(fixed.headers[.vary] == nil)
            // format=auto keeps Accept first.
            let auto = try await proxy.image([url, ("w", "300"), ("dpr", "1")], headers: [.accept: "image/webp"])
            #expect(Self.vary(auto) == ["Accept"])
        }
    }

    /// Issue #29: a hint of any size reached `Int(Double(viewportWidth) * ratio)` and trapped, ending
    /// the process. Out-of-range hints are now ignored; in-range ones are clamped before any conversion.
    @Test func hostileHintValuesAreIgnoredAndNeverTrap() async throws {
        let photo = try TestImages.jpeg(width: 1200, height: 800)
        try await withFixtures(["/p.jpg": .jpeg(photo)], configure: { $0.http.clientHints = true }) { proxy, base, _ in
            let url = ("url", base + "/p.jpg")
            let hostile: [HTTPFields] = [
                [.secCHViewportWidth: "9223372036854775807"],
                [.viewportWidth: "99999999999", .secCHDPR: "4"],
                [.secCHWidth: "9223372036854775807", .dpr: "1e308"],
                [.secCHViewportWidth: "65535", .secCHDPR: "16"],
                [.secCHDPR: "nan", .secCHWidth: "-5"],
                [.dpr: "inf", .viewportWidth: "0"],
            ]
            for headers in hostile {
                let response = try await proxy.image([url, ("format", "png")], headers: headers)
                #expect(response.status == .ok, "\(headers)")
                #expect(try Self.width(response) <= 1200, "\(headers)")
            }
            // A huge viewport at the largest ratio is clamped to the source (no enlarge): the answer is whole.
            let clamped = try await proxy.image([url, ("format", "png")], headers: [.secCHViewportWidth: "65535", .secCHDPR: "4"])
            #expect(try Self.width(clamped) == 1200)
        }
        // Parsing alone: out-of-range values are not hints.
        #expect(ClientHints.parseWidth("9223372036854775807") == nil)
        #expect(ClientHints.parseWidth("0") == nil && ClientHints.parseWidth("65535") == 65535)
        #expect(ClientHints.parseDPR("1e308") == nil && ClientHints.parseDPR("nan") == nil && ClientHints.parseDPR("2.5") == 2.5)
    }

    @Test func hintsAreIgnoredUnlessSwitchedOn() async throws {
        let photo = try TestImages.jpeg(width: 1200, height: 800)
        try await withFixtures(["/p.jpg": .jpeg(photo)]) { proxy, base, _ in
            let response = try await proxy.image([("url", base + "/p.jpg"), ("format", "png")], headers: [.secCHWidth: "300", .dpr: "2"])
            #expect(try Self.width(response) == 1200)
            #expect(response.headers[.vary] == nil && response.headers[.acceptCH] == nil)
        }
    }

    @Test func saveDataLowersTheDefaultQualityOnly() async throws {
        let photo = try TestImages.jpeg(width: 1200, height: 800)
        try await withFixtures(["/p.jpg": .jpeg(photo)], configure: { $0.http.saveDataQuality = 20 }) { proxy, base, _ in
            let url = ("url", base + "/p.jpg")
            let normal = try await proxy.image([url, ("w", "600"), ("format", "jpeg")])
            let saving = try await proxy.image([url, ("w", "600"), ("format", "jpeg")], headers: [.saveData: "on"])
            #expect(normal.status == .ok && saving.status == .ok)
            #expect(saving.body.readableBytes < normal.body.readableBytes * 3 / 4, "\(saving.body.readableBytes) vs \(normal.body.readableBytes)")
            #expect(Self.vary(normal) == ["Save-Data"] && Self.vary(saving) == ["Save-Data"])
            #expect(normal.headers[.eTag] != saving.headers[.eTag])
            // An explicit q wins and the answer does not vary on Save-Data.
            let explicitNormal = try await proxy.image([url, ("w", "600"), ("format", "jpeg"), ("q", "80")])
            let explicitSaving = try await proxy.image([url, ("w", "600"), ("format", "jpeg"), ("q", "80")], headers: [.saveData: "on"])
            #expect(explicitNormal.headers[.eTag] == explicitSaving.headers[.eTag])
            #expect(explicitSaving.headers[.vary] == nil)
        }
    }

    @Test func policyArithmetic() {
        let policy = ClientHints.Policy(clientHints: true, widths: [800, 100, 400])
        #expect(policy.widths == [100, 400, 800])
        #expect(policy.step(1) == 100 && policy.step(100) == 100 && policy.step(101) == 400 && policy.step(5000) == 800)
        #expect(ClientHints.Policy.quantise(0.5) == 1 && ClientHints.Policy.quantise(1.1) == 1.5 && ClientHints.Policy.quantise(9) == 4)
        let parsed = ClientHints(headers: [.secCHDPR: "2", .dpr: "3", .width: "x", .viewportWidth: "-4", .saveData: " On "])
        #expect(parsed == ClientHints(dpr: 2, width: nil, viewportWidth: nil, saveData: true))
    }
}
