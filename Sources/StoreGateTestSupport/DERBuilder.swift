public import SwiftASN1

/// Hand-rolled TLV encoding for test fixtures, including the BER forms Apple's receipts use
/// (indefinite lengths, chunked OCTET STRINGs) that a DER serializer refuses to write.
public enum DERBuilder {
    /// A definite-length element.
    public static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        [tag] + length(content.count) + content
    }

    /// An indefinite-length constructed element (BER), closed by end-of-contents.
    public static func indefinite(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        [tag | 0x20, 0x80] + content + [0x00, 0x00]
    }

    /// Either form of a constructed element.
    public static func constructed(_ tag: UInt8, _ content: [UInt8], indefinite: Bool) -> [UInt8] {
        indefinite ? self.indefinite(tag, content) : element(tag, content)
    }

    public static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var value = count
        while value > 0 {
            bytes.insert(UInt8(value & 0xFF), at: 0)
            value >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    public static func sequence(_ parts: [[UInt8]]) -> [UInt8] { element(0x30, parts.flatMap { $0 }) }
    public static func set(_ parts: [[UInt8]]) -> [UInt8] { element(0x31, parts.flatMap { $0 }) }
    public static func octetString(_ bytes: [UInt8]) -> [UInt8] { element(0x04, bytes) }
    public static func utf8String(_ text: String) -> [UInt8] { element(0x0C, Array(text.utf8)) }
    public static func ia5String(_ text: String) -> [UInt8] { element(0x16, Array(text.utf8)) }
    public static let null: [UInt8] = [0x05, 0x00]

    /// A minimal two's-complement INTEGER.
    public static func integer(_ value: Int64) -> [UInt8] {
        var bytes: [UInt8] = []
        var v = value
        repeat {
            bytes.insert(UInt8(truncatingIfNeeded: v), at: 0)
            v >>= 8
        } while !(v == 0 && bytes[0] & 0x80 == 0) && !(v == -1 && bytes[0] & 0x80 != 0)
        return element(0x02, bytes)
    }

    /// An INTEGER from unsigned big-endian magnitude bytes (serial numbers).
    public static func unsignedInteger(_ magnitude: [UInt8]) -> [UInt8] {
        var bytes = Array(magnitude.drop { $0 == 0 })
        if bytes.isEmpty { bytes = [0] }
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return element(0x02, bytes)
    }

    public static func oid(_ oid: ASN1ObjectIdentifier) -> [UInt8] {
        var serializer = DER.Serializer()
        try? serializer.serialize(oid)  // an OID literal always serializes
        return serializer.serializedBytes
    }

    /// `AlgorithmIdentifier ::= SEQUENCE { algorithm, NULL }`.
    public static func algorithm(_ oid: ASN1ObjectIdentifier) -> [UInt8] {
        sequence([self.oid(oid), null])
    }

    /// A chunked (constructed) OCTET STRING, split into pieces of `chunk` bytes.
    public static func chunkedOctetString(_ bytes: [UInt8], chunk: Int, indefinite: Bool) -> [UInt8] {
        var pieces: [UInt8] = []
        var start = 0
        repeat {
            let end = min(start + max(1, chunk), bytes.count)
            pieces += octetString(Array(bytes[start..<end]))
            start = end
        } while start < bytes.count
        return constructed(0x04, pieces, indefinite: indefinite)
    }
}
