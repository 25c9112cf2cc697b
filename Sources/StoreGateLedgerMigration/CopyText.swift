import NIOCore

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
    mutating func appendText(_ bytes: some Collection<UInt8>) {
        separate()
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
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { hex in
            buffer.reserveCapacity(minimumWritableBytes: bytes.count * 2)
            for byte in bytes {
                buffer.writeInteger(hex[Int(byte >> 4)])
                buffer.writeInteger(hex[Int(byte & 0x0F)])
            }
        }
    }

    mutating func endRow() {
        buffer.writeInteger(UInt8(ascii: "\n"))
        isFirstField = true
        rows += 1
    }
}
