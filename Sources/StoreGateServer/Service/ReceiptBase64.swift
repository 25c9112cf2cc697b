import StoreGateCore
import StoreGateReceipt

/// Base64 text of an app receipt, decoded over contiguous bytes.
///
/// The same rules as Core's `Base64.decode(_:mode: .standardLenient)` — the standard
/// alphabet, ASCII whitespace ignored, padding optional but never followed by data, zero
/// trailing bits — with the same errors as `ReceiptVerifier.verify(base64:…)`, but on an
/// unsafe buffer in one pass: Core's generic entry point is not specialized across the module
/// boundary and cost a sixth of a receipt verification in the service's profile.
enum ReceiptBase64 {
    private static let invalid: UInt8 = 0xFF
    private static let skip: UInt8 = 0xFE
    private static let pad: UInt8 = 0xFD

    private static let table: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (index, char) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(char)] = UInt8(index)
        }
        for char in [0x20, 0x0A, 0x0D, 0x09] { table[char] = skip }
        table[Int(UInt8(ascii: "="))] = pad
        return table
    }()

    /// The receipt's bytes.
    ///
    /// - Throws: `ReceiptError` `empty`, `too_large` (over `limits.maxReceiptBytes` once
    ///   decoded) or `not_base64`, in the input step.
    static func decode(_ text: String, limits: Limits) throws(ReceiptError) -> [UInt8] {
        let length = text.utf8.count
        guard length > 0 else { throw ReceiptError(.empty, reason: "the receipt is empty") }
        guard length <= limits.maxReceiptBytes / 3 * 4 + 4096 else {
            throw ReceiptError(.tooLarge, reason: "the base64 text is over the \(limits.maxReceiptBytes)-byte limit")
        }
        var text = text
        guard let der = text.withUTF8({ decode($0) }) else {
            throw ReceiptError(.notBase64, reason: "the receipt is not valid base64")
        }
        guard !der.isEmpty else { throw ReceiptError(.empty, reason: "the receipt is empty") }
        guard der.count <= limits.maxReceiptBytes else {
            throw ReceiptError(.tooLarge, reason: "\(der.count) bytes is over the \(limits.maxReceiptBytes)-byte limit")
        }
        return der
    }

    /// Decodes standard base64, whitespace ignored, padding optional; `nil` when invalid.
    static func decode(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: input.count / 4 * 3 + 3)
        var written = 0
        var accumulator: UInt32 = 0
        var pending = 0
        var padding = 0
        let failed: Bool = table.withUnsafeBufferPointer { table in
            out.withUnsafeMutableBufferPointer { output in
                for char in input {
                    let value = table[Int(char)]
                    if value < 64 {
                        if padding != 0 { return true }  // data after padding
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
                        return true
                    }
                }
                switch pending {
                case 0:
                    return padding != 0
                case 2:
                    guard accumulator & 0x0F == 0, padding == 0 || padding == 2 else { return true }
                    output[written] = UInt8(truncatingIfNeeded: accumulator >> 4)
                    written += 1
                case 3:
                    guard accumulator & 0x03 == 0, padding == 0 || padding == 1 else { return true }
                    output[written] = UInt8(truncatingIfNeeded: accumulator >> 10)
                    output[written + 1] = UInt8(truncatingIfNeeded: accumulator >> 2)
                    written += 2
                default:
                    return true
                }
                return false
            }
        }
        if failed { return nil }
        out.removeLast(out.count - written)
        return out
    }
}
