import Crypto
import StoreGateCore

/// A table's row count and SHA-256 over a canonical encoding of its rows in key order,
/// computed the same way from what each database returns.
///
/// Each row is its values in column order, each value a tag and its bytes: `0` null; `1` and
/// 8 big-endian bytes an integer (booleans are the integers 0 and 1); `2` text and `3` bytes,
/// each with a 4-byte big-endian length; `4` a JSON value in the canonical form of
/// ``appendJSON(_:)``. The encoding has no separators to confuse: every part says its length.
struct TableDigest: Sendable {
    /// Rows added so far.
    private(set) var rows = 0
    private var hasher = SHA256()
    /// The row being encoded.
    private var scratch: [UInt8] = []

    init() {
        scratch.reserveCapacity(512)
    }

    mutating func appendNull() { scratch.append(0) }

    mutating func appendInteger(_ value: Int64) {
        scratch.append(1)
        appendBigEndian(UInt64(bitPattern: value))
    }

    mutating func appendText(_ bytes: some Collection<UInt8>) {
        scratch.append(2)
        appendLength(bytes.count)
        scratch.append(contentsOf: bytes)
    }

    mutating func appendBlob(_ bytes: some Collection<UInt8>) {
        scratch.append(3)
        appendLength(bytes.count)
        scratch.append(contentsOf: bytes)
    }

    /// A JSON value by value: objects' members sorted by their names' UTF-8 bytes, a fraction
    /// without a fraction (`1e2`, which PostgreSQL prints `100`) as the integer it is.
    mutating func appendJSON(_ value: JSONValue) {
        scratch.append(4)
        appendCanonical(value)
    }

    /// Ends the row: hashes it.
    mutating func endRow() {
        hasher.update(data: scratch)
        scratch.removeAll(keepingCapacity: true)
        rows += 1
    }

    /// The digest, as lowercase hex.
    func hex() -> String {
        Hex.encode(hasher.finalize())
    }

    private mutating func appendCanonical(_ value: JSONValue) {
        switch value {
        case .null: scratch.append(UInt8(ascii: "n"))
        case .bool(let flag): scratch.append(UInt8(ascii: flag ? "t" : "f"))
        case .integer(let number):
            scratch.append(UInt8(ascii: "i"))
            appendBigEndian(UInt64(bitPattern: number))
        case .fraction(let number):
            if number.rounded() == number, abs(number) < 9.2e18 {
                scratch.append(UInt8(ascii: "i"))
                appendBigEndian(UInt64(bitPattern: Int64(number)))
            } else {
                scratch.append(UInt8(ascii: "d"))
                appendBigEndian(number.bitPattern)
            }
        case .string(let text):
            scratch.append(UInt8(ascii: "s"))
            appendLength(text.utf8.count)
            scratch.append(contentsOf: text.utf8)
        case .array(let items):
            scratch.append(UInt8(ascii: "a"))
            appendLength(items.count)
            for item in items { appendCanonical(item) }
        case .object(let object):
            scratch.append(UInt8(ascii: "o"))
            appendLength(object.members.count)
            for member in object.members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                appendLength(member.key.utf8.count)
                scratch.append(contentsOf: member.key.utf8)
                appendCanonical(member.value)
            }
        }
    }

    private mutating func appendLength(_ count: Int) {
        let value = UInt32(truncatingIfNeeded: count)
        for shift in stride(from: 24, through: 0, by: -8) { scratch.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    private mutating func appendBigEndian(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { scratch.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
