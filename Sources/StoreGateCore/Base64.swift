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
    private static let skip: UInt8 = 0xFE
    private static let pad: UInt8 = 0xFD

    private static func table(_ url: Bool) -> [UInt8] {
        var table = [UInt8](repeating: invalid, count: 256)
        for (index, char) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8.enumerated() {
            table[Int(char)] = UInt8(index)
        }
        table[Int(url ? UInt8(ascii: "-") : UInt8(ascii: "+"))] = 62
        table[Int(url ? UInt8(ascii: "_") : UInt8(ascii: "/"))] = 63
        return table
    }

    private static let urlTable = table(true)
    private static let standardTable: [UInt8] = {
        var standard = table(false)
        standard[Int(UInt8(ascii: "="))] = pad
        return standard
    }()
    private static let lenientTable: [UInt8] = {
        var lenient = standardTable
        for char in [0x20, 0x0A, 0x0D, 0x09] { lenient[char] = skip }
        return lenient
    }()
    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Decodes `input`; `nil` when it is not valid in the given mode (a stray character,
    /// bad padding, a dangling character, non-zero trailing bits), so every byte string has
    /// exactly one strict encoding.
    ///
    /// The one implementation every module uses, on contiguous bytes in one pass: four
    /// characters at a time for strict base64url (a JWS header is about 4.5 KB of it, decoded
    /// on every verification), a table that also classifies whitespace and padding otherwise.
    public static func decode(_ input: UnsafeBufferPointer<UInt8>, mode: Mode) -> [UInt8]? {
        switch mode {
        case .url: return decodeStrictURL(input)
        case .standard: return decodeStandard(input, table: standardTable, paddingRequired: true)
        case .standardLenient: return decodeStandard(input, table: lenientTable, paddingRequired: false)
        }
    }

    /// Decodes any bytes; see ``decode(_:mode:)-(UnsafeBufferPointer<UInt8>,_)``.
    public static func decode(_ input: some Collection<UInt8>, mode: Mode) -> [UInt8]? {
        if let decoded = input.withContiguousStorageIfAvailable({ decode($0, mode: mode) }) {
            return decoded
        }
        return Array(input).withUnsafeBufferPointer { decode($0, mode: mode) }
    }

    /// Decodes a string's UTF-8; see ``decode(_:mode:)-(UnsafeBufferPointer<UInt8>,_)``.
    public static func decode(_ input: some StringProtocol, mode: Mode) -> [UInt8]? {
        var text = String(input)
        return text.withUTF8 { decode($0, mode: mode) }
    }

    /// Strict unpadded base64url: no padding, nothing outside the alphabet.
    private static func decodeStrictURL(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = input.count
        let remainder = count % 4
        guard remainder != 1 else { return nil }
        let outputCount = count / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
        var valid = true
        let output = urlTable.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: outputCount) { out, initialized in
                var inIndex = 0
                var outIndex = 0
                var bad: UInt8 = 0
                let whole = count - remainder
                while inIndex < whole {
                    let a = table[Int(input[inIndex])]
                    let b = table[Int(input[inIndex + 1])]
                    let c = table[Int(input[inIndex + 2])]
                    let d = table[Int(input[inIndex + 3])]
                    bad |= a | b | c | d
                    let value = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    out[outIndex] = UInt8(truncatingIfNeeded: value >> 16)
                    out[outIndex + 1] = UInt8(truncatingIfNeeded: value >> 8)
                    out[outIndex + 2] = UInt8(truncatingIfNeeded: value)
                    inIndex += 4
                    outIndex += 3
                }
                if remainder == 2 {
                    let a = table[Int(input[inIndex])]
                    let b = table[Int(input[inIndex + 1])]
                    bad |= a | b
                    if b & 0x0F != 0 { bad |= 0x80 }
                    out[outIndex] = UInt8(truncatingIfNeeded: UInt32(a) << 2 | UInt32(b) >> 4)
                } else if remainder == 3 {
                    let a = table[Int(input[inIndex])]
                    let b = table[Int(input[inIndex + 1])]
                    let c = table[Int(input[inIndex + 2])]
                    bad |= a | b | c
                    if c & 0x03 != 0 { bad |= 0x80 }
                    let value = UInt32(a) << 10 | UInt32(b) << 4 | UInt32(c) >> 2
                    out[outIndex] = UInt8(truncatingIfNeeded: value >> 8)
                    out[outIndex + 1] = UInt8(truncatingIfNeeded: value)
                }
                // Every table entry below 64 has its top two bits clear; `invalid` sets them.
                valid = bad & 0xC0 == 0
                initialized = outputCount
            }
        }
        return valid ? output : nil
    }

    /// The standard alphabet: padding required (strict) or optional and whitespace skipped
    /// (lenient, as `table` says); never data after padding.
    private static func decodeStandard(_ input: UnsafeBufferPointer<UInt8>, table: [UInt8], paddingRequired: Bool) -> [UInt8]? {
        var written = 0
        var accumulator: UInt32 = 0
        var pending = 0
        var padding = 0
        var failed = false
        let output = table.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: input.count / 4 * 3 + 3) { output, initialized in
                defer { initialized = written }
                for char in input {
                    let value = table[Int(char)]
                    if value < 64 {
                        if padding != 0 {  // data after padding
                            failed = true
                            return
                        }
                        accumulator = accumulator << 6 | UInt32(value)
                        pending += 1
                        if pending == 4 {
                            output[written] = UInt8(truncatingIfNeeded: accumulator >> 16)
                            output[written + 1] = UInt8(truncatingIfNeeded: accumulator >> 8)
                            output[written + 2] = UInt8(truncatingIfNeeded: accumulator)
                            written += 3
                            accumulator = 0
                            pending = 0
                        }
                    } else if value == pad {
                        padding += 1
                    } else if value != skip {
                        failed = true
                        return
                    }
                }
                switch pending {
                case 0:
                    failed = padding != 0
                case 2:
                    guard accumulator & 0x0F == 0, padding == 2 || (!paddingRequired && padding == 0) else {
                        failed = true
                        return
                    }
                    output[written] = UInt8(truncatingIfNeeded: accumulator >> 4)
                    written += 1
                case 3:
                    guard accumulator & 0x03 == 0, padding == 1 || (!paddingRequired && padding == 0) else {
                        failed = true
                        return
                    }
                    output[written] = UInt8(truncatingIfNeeded: accumulator >> 10)
                    output[written + 1] = UInt8(truncatingIfNeeded: accumulator >> 2)
                    written += 2
                default:
                    failed = true
                }
            }
        }
        return failed ? nil : output
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
