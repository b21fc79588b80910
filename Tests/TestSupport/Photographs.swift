import Foundation

/// The real photographs in `Tests/Photographs` (their sources and licences in its README).
public enum Photographs {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Photographs")

    /// The bytes of `name` in `Tests/Photographs`.
    public static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    /// A portrait of one person looking at the camera (512x512; the face about x 175-270, y 75-185).
    public static func astronaut() throws -> [UInt8] { try bytes("astronaut.jpg") }

    /// A photograph without a face (600x400).
    public static func coffee() throws -> [UInt8] { try bytes("coffee.jpg") }
}
