import StoreGateCore

/// The rollup changes one write queues (schema 17): its ``LedgerWritePlan/rollupDeltas`` as
/// one compact value, appended to `ledger_rollup_changes` in the write's transaction and
/// folded into the rollups later, a batch at a time, by ``AnalyticsStore/foldRollupChanges(limit:)``
/// (which deletes what it folds in the same transaction: each change counts exactly once).
///
/// A write then pays for one appended row instead of an upsert per rollup key, each key in
/// its own page of the rollups' primary key; a fold merges the keys many writes share (today's)
/// before it writes them.
///
/// The encoding, version 1: the byte `1`; the distinct strings (count, then each as length
/// and UTF-8 bytes); the rollups (count, then each as the indexes of its measure, environment,
/// product, group, storefront, currency and offer among the strings, its day, count and
/// amount). Numbers are LEB128 varints, the signed ones zigzag-coded. A queued row holds one
/// or more such encodings back to back: SQLite's group commit queues its jobs' changes, each
/// encoded where its plan was made, as one row without decoding them, and the fold merges them.
/// Both backends store the same bytes, so `storegate migrate` copies them as they are.
package enum RollupChanges {
    static let version: UInt8 = 1
    /// The most queued changes one fold transaction takes when everything is folded (a read,
    /// a bulk call).
    package static let foldBatch = 5_000
    /// The most distinct strings ``encode(_:)`` searches one by one before it hashes them.
    static let linearStrings = 48

    /// The encoded changes.
    ///
    /// Runs once per write, where its plan is made, on a few changes with a few distinct
    /// strings (measures, product, group, storefront, currency, offer), so it allocates little
    /// and hashes nothing while there are at most ``linearStrings`` distinct strings: a first
    /// pass finds the strings, each field trying the string it used last (sorted rollups share
    /// most of them with the one before), then the others one by one; a second writes the
    /// table and the rollups straight into the result. Past ``linearStrings`` strings, a
    /// dictionary indexes them.
    package static func encode(_ rollups: [Rollup]) -> [UInt8] {
        var table = StringTable()
        for rollup in rollups { rollup.key.forEachString { _ = table.add($1, field: $0) } }
        var bytes: [UInt8] = [version]
        bytes.reserveCapacity(table.utf8Count + table.strings.count * 2 + rollups.count * 16 + 8)
        appendVarint(UInt64(table.strings.count), to: &bytes)
        for string in table.strings {
            appendVarint(UInt64(string.utf8.count), to: &bytes)
            bytes.append(contentsOf: string.utf8)
        }
        appendVarint(UInt64(rollups.count), to: &bytes)
        for rollup in rollups {
            rollup.key.forEachString { appendVarint(UInt64(table.add($1, field: $0)), to: &bytes) }
            appendSigned(rollup.key.day, to: &bytes)
            appendSigned(rollup.value.count, to: &bytes)
            appendSigned(rollup.value.amount, to: &bytes)
        }
        return bytes
    }

    /// The distinct strings of some changes, in first-use order.
    private struct StringTable {
        private(set) var strings: [String] = []
        private(set) var utf8Count = 0
        private var indexes: [String: Int]?
        /// Per field, the position of the string it used last (−1: none yet).
        private var last = [Int](repeating: -1, count: RollupKey.stringFields)

        /// The position of `string`, added when new.
        mutating func add(_ string: String, field: Int) -> Int {
            let previous = last[field]
            if previous >= 0, strings[previous] == string { return previous }
            let found: Int
            if let known = indexes.map({ $0[string] }) ?? strings.firstIndex(of: string) {
                found = known
            } else {
                found = strings.count
                strings.append(string)
                utf8Count += string.utf8.count
                indexes?[string] = found
                if indexes == nil, strings.count > linearStrings {
                    indexes = Dictionary(uniqueKeysWithValues: zip(strings, strings.indices))
                }
            }
            last[field] = found
            return found
        }
    }

    /// The changes `bytes` encode: one encoding or several back to back, in order.
    ///
    /// - Throws: ``LedgerError/Code/storage`` when the bytes are not version-1 encodings (a
    ///   damaged row is refused whole, never folded in part).
    package static func decode(_ bytes: [UInt8]) throws(LedgerError) -> [Rollup] {
        var reader = Reader(bytes: bytes)
        var rollups: [Rollup] = []
        repeat { try decode(&reader, into: &rollups) } while !reader.isAtEnd
        return rollups
    }

    /// Decodes one encoding from `reader` onto `rollups`.
    private static func decode(_ reader: inout Reader, into rollups: inout [Rollup]) throws(LedgerError) {
        guard try reader.byte() == version else { throw damaged("an unknown version") }
        let stringCount = try reader.count()
        var strings: [String] = []
        strings.reserveCapacity(stringCount)
        for _ in 0..<stringCount {
            let length = try reader.count()
            guard let string = String(validating: try reader.bytes(length), as: UTF8.self) else { throw damaged("a string not in UTF-8") }
            strings.append(string)
        }
        func string() throws(LedgerError) -> String {
            let index = try reader.varint()
            guard index < UInt64(strings.count) else { throw damaged("a string index out of range") }
            return strings[Int(index)]
        }
        let rollupCount = try reader.count()
        rollups.reserveCapacity(rollups.count + rollupCount)
        for _ in 0..<rollupCount {
            let measureName = try string()
            guard let measure = RollupMeasure(rawValue: measureName) else { throw damaged("an unknown measure") }
            let environment = AppStoreEnvironment(rawValue: try string())
            let productId = try string(), group = try string(), storefront = try string(), currency = try string(), offer = try string()
            let day = try reader.signed(), count = try reader.signed(), amount = try reader.signed()
            rollups.append(Rollup(
                key: RollupKey(
                    day: day, measure: measure, environment: environment, productId: productId, subscriptionGroup: group,
                    storefront: storefront, currency: currency, offer: offer
                ),
                value: RollupValue(count: count, amount: amount)
            ))
        }
    }

    private static func damaged(_ what: String) -> LedgerError {
        LedgerError(.storage, reason: "a queued rollup change is damaged: \(what)")
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private static func appendSigned(_ value: Int64, to bytes: inout [UInt8]) {
        appendVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)), to: &bytes)
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        mutating func byte() throws(LedgerError) -> UInt8 {
            guard offset < bytes.count else { throw RollupChanges.damaged("it ends early") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() throws(LedgerError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try byte()
                guard shift < 64, shift < 63 || byte & 0x7F <= 1 else { throw RollupChanges.damaged("a number too large") }
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
        }

        mutating func signed() throws(LedgerError) -> Int64 {
            let value = try varint()
            return Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
        }

        /// A count of items still to read, each at least one byte: never more than the bytes left.
        mutating func count() throws(LedgerError) -> Int {
            let value = try varint()
            guard value <= UInt64(bytes.count - offset) else { throw RollupChanges.damaged("a count beyond its bytes") }
            return Int(value)
        }

        mutating func bytes(_ count: Int) throws(LedgerError) -> ArraySlice<UInt8> {
            guard count <= bytes.count - offset else { throw RollupChanges.damaged("it ends early") }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }
    }
}

extension RollupKey {
    /// How many string fields ``forEachString(_:)`` visits.
    static let stringFields = 7

    /// Calls `body` with each string field's position and value, in the encoding's order:
    /// measure, environment, product, group, storefront, currency, offer.
    @inline(__always)
    func forEachString(_ body: (Int, String) -> Void) {
        body(0, measure.rawValue)
        body(1, environment.rawValue)
        body(2, productId)
        body(3, subscriptionGroup)
        body(4, storefront)
        body(5, currency)
        body(6, offer)
    }
}
