/// Byte-wise base64 decoding and encoding: the standard alphabet (receipts, `x5c`) and
/// the URL-safe one (JWS), without Foundation's string round trips in hot paths.
public enum Base64 {
    /// Which alphabet and which leniency to decode with.
    public enum Mode: Sendable {
        /// RFC 4648 §4, padding required, no other characters.
        case standard
        /// RFC 4648 §4 with ASCII whitespace (line breaks) ignored and padding optional:
        /// how people paste receipts.
        case standardLenient
        /// RFC 4648 §5 (JWS): `-` and `_`, no padding, no other characters.
        case url
    }

    private static let invalid: UInt8 = 0xFF
    private static let whitespace: UInt8 = 0xFE

    private static func table(_ url: Bool) -> [UInt8] {
        var table = [UInt8](repeating: invalid, count: 256)
        for (index, char) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8.enumerated() {
            table[Int(char)] = UInt8(index)
        }
        table[Int(url ? UInt8(ascii: "-") : UInt8(ascii: "+"))] = 62
        table[Int(url ? UInt8(ascii: "_") : UInt8(ascii: "/"))] = 63
        return table
    }

    private static let standardTable = table(false)
    private static let urlTable = table(true)
    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Decodes `input`; `nil` when it is not valid in the given mode (a stray character,
    /// bad padding, a dangling character, non-zero trailing bits).
    public static func decode(_ input: some Collection<UInt8>, mode: Mode) -> [UInt8]? {
        let table = mode == .url ? urlTable : standardTable
        var out: [UInt8] = []
        out.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var pending = 0
        var padding = 0
        for char in input {
            if char == UInt8(ascii: "=") {
                guard mode != .url else { return nil }
                padding += 1
                continue
            }
            let value = table[Int(char)]
            if value == invalid {
                if mode == .standardLenient, char == 0x20 || char == 0x0A || char == 0x0D || char == 0x09 {
                    continue
                }
                return nil
            }
            guard padding == 0 else { return nil }  // data after padding
            accumulator = accumulator << 6 | UInt32(value)
            pending += 1
            if pending == 4 {
                out.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                out.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                out.append(UInt8(truncatingIfNeeded: accumulator))
                accumulator = 0
                pending = 0
            }
        }
        switch pending {
        case 0:
            guard padding == 0 else { return nil }
        case 2:
            guard accumulator & 0x0F == 0 else { return nil }
            guard mode == .url || padding == 2 || (mode == .standardLenient && padding == 0) else { return nil }
            out.append(UInt8(truncatingIfNeeded: accumulator >> 4))
        case 3:
            guard accumulator & 0x03 == 0 else { return nil }
            guard mode == .url || padding == 1 || (mode == .standardLenient && padding == 0) else { return nil }
            out.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            out.append(UInt8(truncatingIfNeeded: accumulator >> 2))
        default:
            return nil
        }
        return out
    }

    /// Decodes a string; see ``decode(_:mode:)-(Collection<UInt8>,_)``.
    public static func decode(_ input: some StringProtocol, mode: Mode) -> [UInt8]? {
        decode(Array(input.utf8), mode: mode)
    }

    /// Encodes bytes: standard alphabet with padding, or URL-safe without.
    public static func encode(_ bytes: some Collection<UInt8>, url: Bool = false) -> String {
        let alphabet = url ? urlAlphabet : standardAlphabet
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            let value = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            out.append(alphabet[Int(value >> 18 & 0x3F)])
            out.append(alphabet[Int(value >> 12 & 0x3F)])
            if second != nil {
                out.append(alphabet[Int(value >> 6 & 0x3F)])
            } else if !url {
                out.append(UInt8(ascii: "="))
            }
            if third != nil {
                out.append(alphabet[Int(value & 0x3F)])
            } else if !url {
                out.append(UInt8(ascii: "="))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
