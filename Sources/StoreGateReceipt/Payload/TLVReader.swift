/// A minimal, allocation-free reader of BER/DER tag-length-value elements, for the receipt
/// payload.
///
/// The payload is a SET of small SEQUENCEs, one per attribute (thousands in a large
/// receipt). Building a node tree for it with a general ASN.1 parser costs more than the RSA
/// signature check, so the payload is walked in place over a buffer view. The PKCS#7
/// container around it is decoded with swift-asn1. The reader accepts low tag numbers only,
/// definite lengths up to four length bytes, and indefinite lengths on constructed elements
/// (BER). Every read is checked against `limit`, which is itself checked against the
/// buffer's count: nothing outside the buffer is ever touched.
struct TLVReader {
    /// One element: its identifier octet and where its contents lie.
    struct Element {
        /// The identifier octet (class, constructed bit, tag number).
        let tag: UInt8
        /// Contents, excluding an indefinite-length terminator.
        let content: Range<Int>
        /// Index just past the element (after the end-of-contents octets when indefinite).
        let end: Int
        /// Whether the length was indefinite.
        let isIndefinite: Bool

        var isConstructed: Bool { tag & 0x20 != 0 }
    }

    enum Failure: Error {
        case truncated, unsupportedTag, badLength, tooDeep
    }

    static let maxDepth = 16

    /// Reads the element starting at `offset`, which must end at or before `limit`.
    static func element(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, limit: Int, depth: Int = 0) throws(Failure) -> Element {
        guard depth < maxDepth else { throw .tooDeep }
        guard offset >= 0, limit <= bytes.count, offset <= limit - 2 else { throw .truncated }
        let tag = bytes[offset]
        guard tag & 0x1F != 0x1F else { throw .unsupportedTag }
        let first = bytes[offset + 1]
        var cursor = offset + 2
        if first == 0x80 {
            // Indefinite length: constructed only; children until 00 00.
            guard tag & 0x20 != 0 else { throw .badLength }
            let start = cursor
            while true {
                guard cursor <= limit - 2 else { throw .truncated }
                if bytes[cursor] == 0, bytes[cursor + 1] == 0 {
                    return Element(tag: tag, content: start..<cursor, end: cursor + 2, isIndefinite: true)
                }
                cursor = try element(bytes, at: cursor, limit: limit, depth: depth + 1).end
            }
        }
        var length: Int
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count >= 1, count <= 4, count <= limit - cursor else { throw .badLength }
            length = 0
            for index in cursor..<(cursor + count) {
                length = length << 8 | Int(bytes[index])
            }
            cursor += count
        }
        guard length <= limit - cursor else { throw .truncated }
        return Element(tag: tag, content: cursor..<(cursor + length), end: cursor + length, isIndefinite: false)
    }

    /// The bytes of a constructed (chunked) OCTET STRING, joined.
    static func joinedOctets(_ bytes: UnsafeBufferPointer<UInt8>, of element: Element, depth: Int = 0) throws(Failure) -> [UInt8] {
        guard element.tag == 0x24 else { throw .unsupportedTag }
        var joined: [UInt8] = []
        var cursor = element.content.lowerBound
        while cursor < element.content.upperBound {
            let piece = try TLVReader.element(bytes, at: cursor, limit: element.content.upperBound, depth: depth + 1)
            if piece.tag == 0x04 {
                joined += UnsafeBufferPointer(rebasing: bytes[piece.content])
            } else {
                joined += try joinedOctets(bytes, of: piece, depth: depth + 1)
            }
            cursor = piece.end
        }
        return joined
    }

    /// A two's-complement INTEGER of at most 8 content bytes.
    static func integer(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int64? {
        guard !range.isEmpty, range.count <= 8, range.lowerBound >= 0, range.upperBound <= bytes.count else { return nil }
        var value: Int64 = bytes[range.lowerBound] & 0x80 != 0 ? -1 : 0
        for index in range {
            value = value << 8 | Int64(bytes[index])
        }
        return value
    }
}
