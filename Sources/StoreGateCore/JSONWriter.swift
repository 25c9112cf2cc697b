package import Foundation

/// A value that writes itself as JSON.
///
/// StoreGate's documents write themselves instead of going through `JSONEncoder`, whose
/// boxing, key conversion and dynamic dispatch cost more than the rest of an entitlements
/// read: the service's replies, Apple's verifyReceipt spelling, the PostgreSQL ledger's plan.
package protocol JSONWritable {
    /// Writes this value as one JSON value.
    func write(to json: inout JSONWriter)
}

/// The one JSON writer: appends JSON to a byte buffer, objects and arrays with their
/// separators, strings escaped per RFC 8259, dates as RFC 3339 with milliseconds.
///
/// A member whose value is `nil` is left out (as `JSONEncoder` leaves it out), unless it is
/// written with `nullableMember`, which writes `null`.
package struct JSONWriter {
    /// The JSON written so far.
    package private(set) var bytes: [UInt8] = []
    /// Whether the next member or element needs a comma before it, per open container.
    private var needsComma: [Bool] = []

    /// A writer whose buffer holds `capacity` bytes before it grows.
    package init(capacity: Int = 1024) {
        bytes.reserveCapacity(capacity)
        needsComma.reserveCapacity(8)
    }

    /// The JSON of `value`.
    package static func encode(_ value: some JSONWritable, capacity: Int = 1024) -> [UInt8] {
        var writer = JSONWriter(capacity: capacity)
        value.write(to: &writer)
        return writer.bytes
    }

    /// The JSON written so far, as text.
    package var text: String { String(decoding: bytes, as: UTF8.self) }

    // MARK: Containers

    /// Writes `{`, the members `body` writes, and `}`.
    package mutating func object(_ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
        body(&self)
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    /// Writes `[`, the elements `body` writes, and `]`.
    package mutating func array(_ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma.append(false)
        body(&self)
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    /// An array of writable values.
    package mutating func array(_ values: [some JSONWritable]) {
        array { json in
            for value in values { value.write(to: &json) }
        }
    }

    /// An array of strings.
    package mutating func array(_ values: [String]) {
        array { json in
            for value in values { json.string(value) }
        }
    }

    /// An array with one element per item, each written by `element`.
    package mutating func array<Item>(_ items: [Item], _ element: (inout JSONWriter, Item) -> Void) {
        array { json in
            for item in items { element(&json, item) }
        }
    }

    // MARK: Members

    /// Writes a member name; the value written next is its value.
    package mutating func key(_ name: StaticString) {
        key(name, suffix: "")
    }

    /// Writes the member name `name` followed by `suffix` (`purchase_date` and `_ms`); the
    /// value written next is its value. Neither part is escaped: both are the program's own.
    package mutating func key(_ name: StaticString, suffix: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        suffix.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        valueFollows()
    }

    /// A member name given at run time (escaped).
    package mutating func key(_ name: String) {
        separate()
        appendString(name)
        bytes.append(UInt8(ascii: ":"))
        valueFollows()
    }

    package mutating func member(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    package mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        member(name, value)
    }

    package mutating func member(_ name: StaticString, _ value: Int) {
        key(name)
        integer(Int64(value))
    }

    package mutating func member(_ name: StaticString, _ value: Int?) {
        guard let value else { return }
        member(name, value)
    }

    package mutating func member(_ name: StaticString, _ value: Int64) {
        key(name)
        integer(value)
    }

    package mutating func member(_ name: StaticString, _ value: Int64?) {
        guard let value else { return }
        member(name, value)
    }

    package mutating func member(_ name: StaticString, _ value: Bool) {
        key(name)
        boolean(value)
    }

    package mutating func member(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        member(name, value)
    }

    package mutating func member(_ name: StaticString, _ value: Date) {
        key(name)
        string(CivilTime.rfc3339(value, milliseconds: true))
    }

    package mutating func member(_ name: StaticString, _ value: Date?) {
        guard let value else { return }
        member(name, value)
    }

    package mutating func member(_ name: StaticString, _ value: some JSONWritable) {
        key(name)
        value.write(to: &self)
    }

    package mutating func member(_ name: StaticString, _ value: (some JSONWritable)?) {
        guard let value else { return }
        member(name, value)
    }

    package mutating func member(_ name: StaticString, _ values: [some JSONWritable]) {
        key(name)
        array(values)
    }

    package mutating func member(_ name: StaticString, _ values: [String]) {
        key(name)
        array(values)
    }

    /// A member whose value is `bytes` as a string of lowercase hexadecimal digits.
    package mutating func member(_ name: StaticString, hex bytes: [UInt8]) {
        key(name)
        hex(bytes)
    }

    // MARK: Members written as `null` when absent

    /// A string member, `null` when `value` is `nil`.
    package mutating func nullableMember(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }

    /// An integer member, `null` when `value` is `nil`.
    package mutating func nullableMember(_ name: StaticString, _ value: Int64?) {
        key(name)
        if let value { integer(value) } else { null() }
    }

    /// A member holding `bytes` in hexadecimal, `null` when `bytes` is `nil`.
    package mutating func nullableMember(_ name: StaticString, hex bytes: [UInt8]?) {
        key(name)
        if let bytes { hex(bytes) } else { null() }
    }

    // MARK: Values

    package mutating func string(_ value: String) {
        separate()
        appendString(value)
    }

    package mutating func integer(_ value: Int64) {
        separate()
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDigits(value.magnitude)
    }

    package mutating func boolean(_ value: Bool) {
        separate()
        if value {
            bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65])  // true
        } else {
            bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])  // false
        }
    }

    /// A finite number in Swift's shortest round-trip form (`12.99`, `1e-05`); `null` when
    /// not finite, which JSON cannot write.
    package mutating func number(_ value: Double) {
        guard value.isFinite else { return null() }
        separate()
        bytes.append(contentsOf: Array(String(value).utf8))
    }

    /// `"name": value`, left out when `nil`.
    package mutating func member(_ name: StaticString, _ value: Double?) {
        guard let value else { return }
        key(name)
        number(value)
    }

    package mutating func null() {
        separate()
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])  // null
    }

    /// `value` as a string of lowercase hexadecimal digits.
    package mutating func hex(_ value: [UInt8]) {
        separate()
        bytes.reserveCapacity(bytes.count + value.count * 2 + 2)
        bytes.append(UInt8(ascii: "\""))
        for byte in value {
            bytes.append(Self.hex[Int(byte >> 4)])
            bytes.append(Self.hex[Int(byte & 0x0F)])
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// An integer written as a string of its decimal digits (`"1700000000000"`), as Apple
    /// writes ids, quantities and millisecond dates in verifyReceipt replies.
    package mutating func integerString(_ value: Int64) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDigits(value.magnitude)
        bytes.append(UInt8(ascii: "\""))
    }

    /// JSON produced elsewhere (for example by `JSONEncoder`), written as one value.
    package mutating func raw(_ json: some Sequence<UInt8>) {
        separate()
        bytes.append(contentsOf: json)
    }

    // MARK: Internals

    private mutating func separate() {
        guard let last = needsComma.last else { return }
        if last {
            bytes.append(UInt8(ascii: ","))
        } else {
            needsComma[needsComma.count - 1] = true
        }
    }

    /// After a member name: the value follows without a comma.
    private mutating func valueFollows() {
        if !needsComma.isEmpty { needsComma[needsComma.count - 1] = false }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// The decimal digits of `magnitude`, most significant first.
    private mutating func appendDigits(_ magnitude: UInt64) {
        var divisor: UInt64 = 1
        while magnitude / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude / divisor % 10))
            divisor /= 10
        }
    }

    private mutating func appendString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), Self.hex[Int(byte >> 4)], Self.hex[Int(byte & 0x0F)]])
                }
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<utf8.count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
