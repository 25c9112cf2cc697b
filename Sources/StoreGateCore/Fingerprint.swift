import Crypto
public import Foundation

/// The SHA-256 digest of a certificate's DER encoding, the way DESIGN.md pins Apple's roots.
public struct Fingerprint: Hashable, Sendable, CustomStringConvertible {
    /// The 32 digest bytes.
    public let bytes: [UInt8]

    /// Fingerprints the given DER bytes.
    public init(of der: some DataProtocol) {
        self.bytes = Array(SHA256.hash(data: der))
    }

    /// A fingerprint from its 32 digest bytes; `nil` for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// A pinned constant written in the source.
    init(pinned bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Reads a fingerprint written as 64 hexadecimal digits (colons and spaces ignored).
    public init?(hex: String) {
        guard let bytes = Hex.decode(hex.filter { $0 != ":" && $0 != " " }), bytes.count == 32 else {
            return nil
        }
        self.bytes = bytes
    }

    /// Upper-case hexadecimal, as DESIGN.md writes the pins.
    public var description: String { Hex.encode(bytes, uppercase: true) }
}

/// Hexadecimal encoding and decoding without Foundation formatters.
public enum Hex {
    private static let lower = Array("0123456789abcdef".utf8)
    private static let upper = Array("0123456789ABCDEF".utf8)

    /// Encodes bytes as hexadecimal digits.
    public static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
        let digits = uppercase ? upper : lower
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes hexadecimal digits (either case); `nil` for odd length or any other character.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
