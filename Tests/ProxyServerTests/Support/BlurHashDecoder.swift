import Foundation

@testable import ImageCore
@testable import ProxyEngine

/// A BlurHash decoder (the reference algorithm), to check what the service encodes.
enum BlurHashDecoder {
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    static func decode83(_ text: Substring) -> Int? {
        var value = 0
        for character in text {
            guard let digit = alphabet.firstIndex(of: character) else { return nil }
            value = value * 83 + digit
        }
        return value
    }

    /// Components, and RGB pixels of `width`×`height`; nil when the hash is malformed.
    static func decode(_ hash: String, width: Int, height: Int) -> (componentsX: Int, componentsY: Int, rgb: [UInt8])? {
        let characters = Array(hash)
        guard characters.count >= 6, let size = decode83(Substring(String(characters[0]))) else { return nil }
        let componentsX = size % 9 + 1, componentsY = size / 9 + 1
        guard characters.count == 4 + 2 * componentsX * componentsY,
            let quantisedMaximum = decode83(Substring(String(characters[1])))
        else { return nil }
        let maximum = Double(quantisedMaximum + 1) / 166
        func linear(_ value: Int) -> Double {
            let v = Double(value) / 255
            return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
        }
        func signedPow(_ value: Double) -> Double { value < 0 ? -(value * value) : value * value }
        var colours: [(Double, Double, Double)] = []
        guard let dc = decode83(Substring(String(characters[2..<6]))) else { return nil }
        colours.append((linear(dc >> 16), linear((dc >> 8) & 255), linear(dc & 255)))
        for index in 1..<(componentsX * componentsY) {
            let start = 4 + index * 2
            guard let value = decode83(Substring(String(characters[start..<start + 2]))) else { return nil }
            let r = value / (19 * 19), g = (value / 19) % 19, b = value % 19
            colours.append((
                signedPow((Double(r) - 9) / 9) * maximum, signedPow((Double(g) - 9) / 9) * maximum,
                signedPow((Double(b) - 9) / 9) * maximum))
        }
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                var r = 0.0, g = 0.0, b = 0.0
                for j in 0..<componentsY {
                    for i in 0..<componentsX {
                        let basis = cos(Double.pi * Double(x) * Double(i) / Double(width))
                            * cos(Double.pi * Double(y) * Double(j) / Double(height))
                        let colour = colours[i + j * componentsX]
                        r += colour.0 * basis
                        g += colour.1 * basis
                        b += colour.2 * basis
                    }
                }
                func sRGB(_ value: Double) -> UInt8 {
                    let v = max(0, min(1, value))
                    return UInt8(v <= 0.0031308 ? v * 12.92 * 255 + 0.5 : (1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
                }
                let offset = (y * width + x) * 3
                pixels[offset] = sRGB(r)
                pixels[offset + 1] = sRGB(g)
                pixels[offset + 2] = sRGB(b)
            }
        }
        return (componentsX, componentsY, pixels)
    }
}
