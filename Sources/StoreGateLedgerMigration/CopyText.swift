import NIOCore
import StoreGateCore

/// Rows in PostgreSQL's `COPY … FROM STDIN` text format: fields separated by tabs, rows ended
/// by a newline, `\N` for null; backslash, tab, newline and carriage return escaped in text;
/// bytes as `\\x` and hex (the bytea hex form, its backslash escaped); booleans `t` and `f`.
struct CopyText {
    /// The rows so far.
    private(set) var buffer: ByteBuffer
    /// Rows in ``buffer``.
    private(set) var rows = 0
    private var isFirstField = true

    init(capacity: Int = 1 << 20) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }

    private mutating func separate() {
        if isFirstField {
            isFirstField = false
        } else {
            buffer.writeInteger(UInt8(ascii: "\t"))
        }
    }

    mutating func appendNull() {
        separate()
        buffer.writeStaticString("\\N")
    }

    mutating func appendInteger(_ value: Int64) {
        separate()
        buffer.writeString(String(value))
    }

    mutating func appendBoolean(_ value: Bool) {
        separate()
        buffer.writeInteger(UInt8(ascii: value ? "t" : "f"))
    }

    /// Text (or JSON) as UTF-8 bytes; the caller checked they are UTF-8 without NUL.
    mutating func appendText(_ bytes: [UInt8]) {
        separate()
        // Most text needs no escape: one copy then, not a write per byte.
        guard bytes.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) else {
            buffer.writeBytes(bytes)
            return
        }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
            case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
            case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
            case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
            default: buffer.writeInteger(byte)
            }
        }
    }

    mutating func appendBlob(_ bytes: some Collection<UInt8>) {
        separate()
        buffer.writeStaticString("\\\\x")
        buffer.writeString(Hex.encode(bytes))
    }

    mutating func endRow() {
        buffer.writeInteger(UInt8(ascii: "\n"))
        isFirstField = true
        rows += 1
    }
}
