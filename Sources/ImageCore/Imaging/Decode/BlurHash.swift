import Foundation

/// BlurHash (https://blurha.sh): a short text that decodes to a blurred placeholder of an image.
public enum BlurHash {
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    /// Encodes interleaved 8-bit RGB pixels with `componentsX` x `componentsY` (1...9 each) components.
    public static func encode(rgb pixels: [UInt8], width: Int, height: Int, componentsX: Int, componentsY: Int) -> String {
        var factors: [(Double, Double, Double)] = []
        for j in 0..<componentsY {
            for i in 0..<componentsX {
                let normalisation = (i == 0 && j == 0) ? 1.0 : 2.0
                var r = 0.0, g = 0.0, b = 0.0
                for y in 0..<height {
                    let basisY = cos(Double.pi * Double(j) * Double(y) / Double(height))
                    for x in 0..<width {
                        let basis = normalisation * cos(Double.pi * Double(i) * Double(x) / Double(width)) * basisY
                        let offset = (y * width + x) * 3
                        r += basis * sRGBToLinear(pixels[offset])
                        g += basis * sRGBToLinear(pixels[offset + 1])
                        b += basis * sRGBToLinear(pixels[offset + 2])
                    }
                }
                let scale = 1.0 / Double(width * height)
                factors.append((r * scale, g * scale, b * scale))
            }
        }
        var hash = encode83((componentsX - 1) + (componentsY - 1) * 9, length: 1)
        let ac = factors.dropFirst()
        let maximumValue: Double
        if let actualMaximum = ac.map({ max(abs($0.0), abs($0.1), abs($0.2)) }).max() {
            let quantised = max(0, min(82, Int((actualMaximum * 166 - 0.5).rounded(.down))))
            maximumValue = Double(quantised + 1) / 166
            hash += encode83(quantised, length: 1)
        } else {
            maximumValue = 1
            hash += encode83(0, length: 1)
        }
        let dc = factors[0]
        hash += encode83(linearToSRGB(dc.0) << 16 + linearToSRGB(dc.1) << 8 + linearToSRGB(dc.2), length: 4)
        for factor in ac {
            func quantise(_ value: Double) -> Int {
                max(0, min(18, Int((signedPow(value / maximumValue, 0.5) * 9 + 9.5).rounded(.down))))
            }
            hash += encode83(quantise(factor.0) * 19 * 19 + quantise(factor.1) * 19 + quantise(factor.2), length: 2)
        }
        return hash
    }

    static func encode83(_ value: Int, length: Int) -> String {
        var result = ""
        for position in 1...length {
            var divisor = 1
            for _ in 0..<(length - position) { divisor *= 83 }
            result.append(alphabet[(value / divisor) % 83])
        }
        return result
    }

    static func sRGBToLinear(_ value: UInt8) -> Double {
        let v = Double(value) / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    static func linearToSRGB(_ value: Double) -> Int {
        let v = max(0, min(1, value))
        return v <= 0.0031308 ? Int(v * 12.92 * 255 + 0.5) : Int((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }

    static func signedPow(_ value: Double, _ exponent: Double) -> Double {
        value < 0 ? -pow(-value, exponent) : pow(value, exponent)
    }
}
