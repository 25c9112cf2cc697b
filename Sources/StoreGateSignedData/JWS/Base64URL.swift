/// Strict, unpadded base64url decoding (RFC 4648 §5, as RFC 7515 uses it), four characters at
/// a time straight into the output buffer: the header of an Apple JWS is about 4.5 KB of
/// base64url, decoded on every verification.
///
/// Refused: padding, any character outside the URL-safe alphabet, a dangling single
/// character, and non-zero trailing bits (so every byte string has exactly one encoding).
enum Base64URL {
    private static let invalid: UInt8 = 0xFF

    private static let table: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (index, char) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.enumerated() {
            table[Int(char)] = UInt8(index)
        }
        return table
    }()

    /// Decodes `input`; `nil` when it is not strict unpadded base64url.
    static func decode(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = input.count
        let remainder = count % 4
        guard remainder != 1 else { return nil }
        let outputCount = count / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
        var valid = true
        let output = table.withUnsafeBufferPointer { table in
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

    /// Decodes a slice of a byte array.
    static func decode(_ input: ArraySlice<UInt8>) -> [UInt8]? {
        input.withUnsafeBufferPointer { decode($0) }
    }
}
