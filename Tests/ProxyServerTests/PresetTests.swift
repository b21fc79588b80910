import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// Named presets through the real server and libvips (issue #32): `preset=` expands, presets combine in
/// order, explicit parameters win, and presets-only mode refuses everything else while needing no signature.
@Suite(.timeLimit(.minutes(3))) struct PresetTests {
    static let photo: [UInt8] = try! TestImages.jpeg(width: 640, height: 480)

    static let definitions = [
        "thumb": "w=120&h=80&fit=cover&format=png",
        "webp": "format=webp&q=60",
        "soft": "filter=blur%3A1.5",
    ]

    static func table(presetsOnly: Bool = false) throws -> PresetTable {
        try PresetTable(definitions: definitions, presetsOnly: presetsOnly)
    }

    @Test func presetsExpandCombineInOrderAndExplicitParametersWin() async throws {
        let table = try Self.table()
        try await withFixtures(["/p.jpg": .jpeg(Self.photo)], configure: { $0.presets = table }) { proxy, base, _ in
            let url = ("url", base + "/p.jpg")
            let preset = try await proxy.image([url, ("preset", "thumb")])
            let explicit = try await proxy.image([url, ("w", "120"), ("h", "80"), ("fit", "cover"), ("format", "png")])
            #expect(preset.status == .ok && preset.headers[.contentType] == "image/png")
            #expect(try VipsImage.decode(preset.bytes).width == 120 && VipsImage.decode(preset.bytes).height == 80)
            #expect(preset.headers[.eTag] == explicit.headers[.eTag], "a preset is its parameters: one variant")
            #expect(explicit.headers[.init("X-Cache")!] == "memory")

            let thenWebP = try await proxy.image([url, ("preset", "thumb,webp")])
            #expect(thenWebP.headers[.contentType] == "image/webp", "the later preset's format wins")
            #expect(try VipsImage.decode(thenWebP.bytes).width == 120)
            let thenThumb = try await proxy.image([url, ("preset", "webp,thumb")])
            #expect(thenThumb.headers[.contentType] == "image/png")

            let narrower = try await proxy.image([url, ("preset", "thumb"), ("w", "60")])
            #expect(try VipsImage.decode(narrower.bytes).width == 60, "an explicit w wins over the preset's")
            #expect(try VipsImage.decode(narrower.bytes).height == 80)

            let soft = try await proxy.image([url, ("preset", "thumb,soft")])
            #expect(soft.status == .ok && soft.headers[.eTag] != preset.headers[.eTag], "the blur of 'soft' applies")

            for (query, named) in [
                ("nope", "unknown preset 'nope'"), ("thumb,,webp", "unknown preset ''"),
                (Array(repeating: "thumb", count: 9).joined(separator: ","), "more than 8"),
            ] {
                let refused = try await proxy.image([url, ("preset", query)])
                #expect(refused.status == .badRequest && refused.text.contains("'preset'") && refused.text.contains(named), "\(refused.text)")
            }
            let twice = try await proxy.image([url, ("preset", "thumb"), ("preset", "webp")])
            #expect(twice.status == .badRequest && twice.text.contains("more than once"))
        }
    }

    @Test func presetsOnlyRefusesOtherParametersAndNeedsNoSignature() async throws {
        let table = try Self.table(presetsOnly: true)
        try await withFixtures(["/p.jpg": .jpeg(Self.photo)], configure: {
            $0.presets = table
            $0.security.signingKeys = ["preset-test-key"]
        }) { proxy, base, _ in
            let url = ("url", base + "/p.jpg")
            let unsigned = try await proxy.image([url, ("preset", "thumb")])
            #expect(unsigned.status == .ok, "\(unsigned.text)")
            #expect(try VipsImage.decode(unsigned.bytes).width == 120)
            let plain = try await proxy.image([url])
            #expect(plain.status == .badRequest && plain.text.contains("'preset'") && plain.text.contains("required"),
                "url alone would be the source re-encoded at full size: \(plain.status) \(plain.text)")
            for parameter in [("w", "60"), ("q", "10"), ("format", "avif")] {
                let refused = try await proxy.image([url, ("preset", "thumb"), parameter])
                #expect(refused.status == .badRequest, "\(parameter.0)")
                #expect(refused.text.contains("'\(parameter.0)'") && refused.text.contains("presetsOnly"), "\(refused.text)")
            }
            let forged = try await proxy.image([url, ("preset", "thumb"), ("sig", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")])
            #expect(forged.status == .forbidden, "a given signature is still checked")
            let infoPath = "/info?url=\((base + "/p.jpg").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
            let info = try await proxy.execute(uri: infoPath, method: .get)
            #expect(info.status == .forbidden && String(buffer: info.body).contains("presetsOnly"), "/info needs a signature in this mode")
            let signed = try await proxy.execute(uri: URLSigner(keys: ["preset-test-key"])!.sign(infoPath), method: .get)
            #expect(signed.status == .ok, "a signed /info is answered")
        }
    }

    @Test func presetsOnlyAppliesTheDefaultPresetAndRefusesInfoWithoutAKey() async throws {
        var table = try Self.table(presetsOnly: true)
        table.defaultPreset = "thumb"
        try await withFixtures(
            ["/p.jpg": .jpeg(Self.photo)],
            configure: {
                $0.presets = table
                $0.fetch.s3.buckets = ["images"]
            }
        ) { proxy, base, _ in
            let plain = try await proxy.image([("url", base + "/p.jpg")])
            #expect(plain.status == .ok, "\(plain.text)")
            #expect(try VipsImage.decode(plain.bytes).width == 120, "the default preset's variant")
            let named = try await proxy.image([("url", base + "/p.jpg"), ("preset", "webp")])
            #expect(named.status == .ok && named.headers[.contentType] == "image/webp", "a named preset wins over the default")
            for source in [base + "/p.jpg", "s3://images/p.jpg"] {
                let encoded = source.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let info = try await proxy.execute(uri: "/info?url=\(encoded)", method: .get)
                #expect(info.status == .forbidden, "\(source): no key, no /info in presets-only mode")
            }
            let s3 = try await proxy.image([("url", "s3://images/p.jpg"), ("w", "4000")])
            #expect(s3.status == .badRequest, "s3:// sources get presets only too")
        }
        // Without a default, an s3:// source naming no preset is a 400 before any fetch.
        try await withFixtures([:], configure: {
            $0.presets = try! Self.table(presetsOnly: true)
            $0.fetch.s3.buckets = ["images"]
        }) { proxy, _, _ in
            let refused = try await proxy.image([("url", "s3://images/p.jpg")])
            #expect(refused.status == .badRequest && refused.text.contains("'preset'"), "\(refused.text)")
        }
    }

    @Test func prefetchExpandsPresets() async throws {
        let table = try Self.table(presetsOnly: true)
        try await withFixturesAndRuntime(["/p.jpg": .jpeg(Self.photo)], configure: { $0.presets = table }) { runtime, base in
            let port = try #require(runtime.listeningPort.value)
            let source = (base + "/p.jpg").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let body = try JSONSerialization.data(withJSONObject: ["urls": [
                "/img?url=\(source)&preset=thumb", "/img?url=\(source)&preset=nope", "/img?url=\(source)&w=10",
            ]])
            let answer = try await httpRequest(port: port, path: "/prefetch", method: "POST", body: body)
            let json = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any])
            #expect(json["accepted"] as? Int == 1)
            let errors = (json["rejected"] as? [[String: String]] ?? []).compactMap { $0["error"] }
            #expect(errors.count == 2 && errors.contains { $0.contains("unknown preset") } && errors.contains { $0.contains("presetsOnly") })
            var cached = false
            for _ in 0..<100 where !cached {
                let probe = try await httpRequest(
                    port: port, path: "/img?url=\(source)&preset=thumb", headers: ["Cache-Control": "only-if-cached"])
                cached = probe.status == 200
                if !cached { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(cached, "the preset's variant was made in the background")
        }
    }

    @Test func theFileDefinesPresetsAndABadOneStopsTheStart() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ipx-presets-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "http:\n  presetsOnly: true\npresets:\n  thumb: \"w=300&h=300&fit=cover\"\n  next-640: w=640\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        let loaded = try await ProxyConfiguration.load(filePath: path, environment: [:])
        #expect(loaded.presets.presetsOnly)
        #expect(loaded.presets.presets["thumb"]?.map(\.name) == ["w", "h", "fit"])
        #expect(loaded.presets.presets["next-640"] == [.init(name: "w", value: "640")])

        for (bad, named) in [
            ("presets:\n  thumb: \"w=0\"\n", "presets.thumb"), ("presets:\n  thumb: \"url=x\"\n", "presets.thumb"),
            ("presets:\n  Thumb: \"w=10\"\n", "presets.Thumb"), ("presets:\n  thumb:\n    w: 10\n", "presets.thumb.w"),
            ("presets:\n  thumb: \"zoom=2\"\n", "zoom"), ("presets:\n  a: \"w=1&w=2\"\n", "more than once"),
        ] {
            try bad.write(toFile: path, atomically: true, encoding: .utf8)
            await #expect {
                _ = try await ProxyConfiguration.load(filePath: path, environment: [:])
            } throws: { error in
                "\(error)".contains(named)
            }
        }
    }
}
