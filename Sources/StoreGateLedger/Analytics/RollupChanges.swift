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
/// amount). Numbers are LEB128 varints, the signed ones zigzag-coded. Both backends store the
/// same bytes, so `storegate migrate` copies them as they are.
package enum RollupChanges {
    static let version: UInt8 = 1
    /// The most queued changes one fold transaction takes when everything is folded (a read,
    /// a bulk call).
    package static let foldBatch = 5_000
    /// The most distinct strings ``encode(_:)`` searches one by one before it hashes them.
    static let linearStrings = 48

    /// The encoded changes.
    ///
    /// Runs on the SQLite writer's thread once per group commit (the changes its jobs staged),
    /// so it hashes nothing while a batch has few distinct strings (a few dozen: measures,
    /// products, storefronts, currencies, offers): each field first tries the last strings it
    /// used — sorted rollups share most of them with the ones before — then the batch's
    /// strings; only a batch with more than ``linearStrings`` distinct strings
    /// indexes them in a dictionary. The fields are read in place, not gathered per rollup.
    package static func encode(_ rollups: [Rollup]) -> [UInt8] {
        var strings: [String] = []
        var indexes: [String: Int]?
        var body: [UInt8] = []
        body.reserveCapacity(rollups.count * 16)
        // Per field, up to `recent` positions in `strings` it has used (the oldest replaced).
        let recent = 16
        var used = [[Int]](repeating: [], count: 7)
        var replaced = [Int](repeating: 0, count: 7)
        func index(_ string: String, field: Int) -> UInt64 {
            for position in used[field] where strings[position] == string { return UInt64(position) }
            let found: Int
            if let known = indexes?[string] ?? (indexes == nil ? strings.firstIndex(of: string) : nil) {
                found = known
            } else {
                found = strings.count
                strings.append(string)
                indexes?[string] = found
                if indexes == nil, strings.count > linearStrings {
                    indexes = Dictionary(uniqueKeysWithValues: zip(strings, strings.indices))
                }
            }
            if used[field].count < recent {
                used[field].append(found)
            } else {
                used[field][replaced[field]] = found
                replaced[field] = (replaced[field] + 1) % recent
            }
            return UInt64(found)
        }
        appendVarint(UInt64(rollups.count), to: &body)
        for position in rollups.indices {
            appendVarint(index(rollups[position].key.measure.rawValue, field: 0), to: &body)
            appendVarint(index(rollups[position].key.environment.rawValue, field: 1), to: &body)
            appendVarint(index(rollups[position].key.productId, field: 2), to: &body)
            appendVarint(index(rollups[position].key.subscriptionGroup, field: 3), to: &body)
            appendVarint(index(rollups[position].key.storefront, field: 4), to: &body)
            appendVarint(index(rollups[position].key.currency, field: 5), to: &body)
            appendVarint(index(rollups[position].key.offer, field: 6), to: &body)
            appendSigned(rollups[position].key.day, to: &body)
            appendSigned(rollups[position].value.count, to: &body)
            appendSigned(rollups[position].value.amount, to: &body)
        }
        var bytes: [UInt8] = [version]
        bytes.reserveCapacity(body.count + strings.count * 12 + 4)
        appendVarint(UInt64(strings.count), to: &bytes)
        for string in strings {
            appendVarint(UInt64(string.utf8.count), to: &bytes)
            bytes.append(contentsOf: string.utf8)
        }
        bytes.append(contentsOf: body)
        return bytes
    }

    /// The changes `bytes` encode.
    ///
    /// - Throws: ``LedgerError/Code/storage`` when the bytes are not a version-1 encoding (a
    ///   damaged row is refused whole, never folded in part).
    package static func decode(_ bytes: [UInt8]) throws(LedgerError) -> [Rollup] {
        var reader = Reader(bytes: bytes)
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
        var rollups: [Rollup] = []
        rollups.reserveCapacity(rollupCount)
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
        guard reader.isAtEnd else { throw damaged("bytes after the last change") }
        return rollups
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
