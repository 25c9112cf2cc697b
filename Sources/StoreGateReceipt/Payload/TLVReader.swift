/// A minimal, allocation-free reader of BER/DER tag-length-value elements, for the receipt
/// payload.
///
/// The payload is a SET of small SEQUENCEs, one per attribute (thousands in a large
/// receipt). Building a node tree for it with a general ASN.1 parser costs more than the RSA
/// signature check, so the payload is walked in place. The PKCS#7 container around it is
/// decoded with swift-asn1. The reader accepts low tag numbers only, definite lengths up to
/// four length bytes, and indefinite lengths on constructed elements (BER); it checks every
/// bound against its slice and never reads past it.
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
    static func element(_ bytes: [UInt8], at offset: Int, limit: Int, depth: Int = 0) throws(Failure) -> Element {
        guard depth < maxDepth else { throw .tooDeep }
        guard offset >= 0, limit <= bytes.count, offset + 2 <= limit else { throw .truncated }
        let tag = bytes[offset]
        guard tag & 0x1F != 0x1F else { throw .unsupportedTag }
        let first = bytes[offset + 1]
        var cursor = offset + 2
        if first == 0x80 {
            // Indefinite length: constructed only; children until 00 00.
            guard tag & 0x20 != 0 else { throw .badLength }
            let start = cursor
            while true {
                guard cursor + 2 <= limit else { throw .truncated }
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
            guard count >= 1, count <= 4, cursor + count <= limit else { throw .badLength }
            length = 0
            for index in cursor..<(cursor + count) {
                length = length << 8 | Int(bytes[index])
            }
            cursor += count
        }
        guard length <= limit - cursor else { throw .truncated }
        return Element(tag: tag, content: cursor..<(cursor + length), end: cursor + length, isIndefinite: false)
    }

    /// The children of a constructed element, in order.
    static func children(_ bytes: [UInt8], of parent: Element, depth: Int = 0) throws(Failure) -> [Element] {
        var result: [Element] = []
        var cursor = parent.content.lowerBound
        while cursor < parent.content.upperBound {
            let child = try element(bytes, at: cursor, limit: parent.content.upperBound, depth: depth + 1)
            result.append(child)
            cursor = child.end
        }
        return result
    }

    /// The bytes of an OCTET STRING, joining the pieces of a constructed (chunked) one.
    static func octets(_ bytes: [UInt8], of element: Element, depth: Int = 0) throws(Failure) -> ArraySlice<UInt8> {
        if element.tag == 0x04 {
            return bytes[element.content]
        }
        guard element.tag == 0x24 else { throw .unsupportedTag }
        var joined: [UInt8] = []
        for piece in try children(bytes, of: element, depth: depth) {
            joined += try octets(bytes, of: piece, depth: depth + 1)
        }
        return joined[...]
    }

    /// A two's-complement INTEGER of at most 8 content bytes.
    static func integer(_ content: ArraySlice<UInt8>) -> Int64? {
        guard let first = content.first, content.count <= 8 else { return nil }
        var value: Int64 = first & 0x80 != 0 ? -1 : 0
        for byte in content {
            value = value << 8 | Int64(byte)
        }
        return value
    }
}
