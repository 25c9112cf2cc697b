import Foundation
import StoreGateCore

/// A value that writes itself as JSON.
///
/// The service's replies write themselves instead of going through `JSONEncoder`, whose
/// boxing, key conversion and dynamic dispatch cost more than the rest of an entitlements
/// read. Members whose value is `nil` are left out, as `JSONEncoder` leaves them out.
protocol JSONWritable {
    func write(to json: inout JSONWriter)
}

/// Appends JSON to a byte buffer: objects and arrays with their separators, strings escaped
/// per RFC 8259, dates as RFC 3339 with milliseconds.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    /// Whether the next member or element needs a comma before it, per open container.
    private var needsComma: [Bool] = []

    init(capacity: Int = 1024) {
        bytes.reserveCapacity(capacity)
        needsComma.reserveCapacity(8)
    }

    /// The JSON of `value`.
    static func encode(_ value: some JSONWritable, capacity: Int = 1024) -> [UInt8] {
        var writer = JSONWriter(capacity: capacity)
        value.write(to: &writer)
        return writer.bytes
    }

    // MARK: Containers

    /// Writes `{`, the members `body` writes, and `}`.
    mutating func object(_ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
        body(&self)
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    /// Writes `[`, the elements `body` writes, and `]`.
    mutating func array(_ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma.append(false)
        body(&self)
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    /// An array of writable values.
    mutating func array(_ values: [some JSONWritable]) {
        array { json in
            for value in values { value.write(to: &json) }
        }
    }

    /// An array of strings.
    mutating func array(_ values: [String]) {
        array { json in
            for value in values { json.string(value) }
        }
    }

    // MARK: Members

    /// Writes a member name; the value written next is its value.
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        // The value follows without a comma.
        if !needsComma.isEmpty { needsComma[needsComma.count - 1] = false }
    }

    /// A member name given at run time (escaped).
    mutating func key(_ name: String) {
        separate()
        appendString(name)
        bytes.append(UInt8(ascii: ":"))
        if !needsComma.isEmpty { needsComma[needsComma.count - 1] = false }
    }

    mutating func member(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        member(name, value)
    }

    mutating func member(_ name: StaticString, _ value: Int) {
        key(name)
        integer(Int64(value))
    }

    mutating func member(_ name: StaticString, _ value: Int?) {
        guard let value else { return }
        member(name, value)
    }

    mutating func member(_ name: StaticString, _ value: Int64?) {
        guard let value else { return }
        key(name)
        integer(value)
    }

    mutating func member(_ name: StaticString, _ value: Bool) {
        key(name)
        boolean(value)
    }

    mutating func member(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        member(name, value)
    }

    mutating func member(_ name: StaticString, _ value: Date) {
        key(name)
        string(CivilTime.rfc3339(value, milliseconds: true))
    }

    mutating func member(_ name: StaticString, _ value: Date?) {
        guard let value else { return }
        member(name, value)
    }

    mutating func member(_ name: StaticString, _ value: some JSONWritable) {
        key(name)
        value.write(to: &self)
    }

    mutating func member(_ name: StaticString, _ value: (some JSONWritable)?) {
        guard let value else { return }
        member(name, value)
    }

    mutating func member(_ name: StaticString, _ values: [some JSONWritable]) {
        key(name)
        array(values)
    }

    mutating func member(_ name: StaticString, _ values: [String]) {
        key(name)
        array(values)
    }

    // MARK: Values

    mutating func string(_ value: String) {
        separate()
        appendString(value)
    }

    mutating func integer(_ value: Int64) {
        separate()
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        if magnitude == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var digits: [UInt8] = []
        digits.reserveCapacity(20)
        while magnitude > 0 {
            digits.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        }
        bytes.append(contentsOf: digits.reversed())
    }

    mutating func boolean(_ value: Bool) {
        separate()
        if value {
            bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65])  // true
        } else {
            bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])  // false
        }
    }

    mutating func null() {
        separate()
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])  // null
    }

    /// JSON produced elsewhere (for example by `JSONEncoder`), written as one value.
    mutating func raw(_ json: some Sequence<UInt8>) {
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

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

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
