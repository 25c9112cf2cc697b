import Foundation
import StoreGateCore
@_spi(Fuzzing) import StoreGateLedger
import StoreGateTestSupport
import Testing

extension LedgerTests {
    /// Schema 17: a write queues its rollup changes as one encoded row (``RollupChanges``) and
    /// a fold adds them to the rollups. The encoding must give back exactly what it was given,
    /// and refuse — never half-read — bytes that are not one.
    @Suite("Analytics: queued rollup changes")
    struct RollupChangesTests {
        static let measures = RollupMeasure.allCases
        static let words = ["", "pro.monthly", "pro", "USA", "DEU", "USD", "EUR", "none", "free_trial", "offer_code:SPRING", "ü日本"]

        static func randomRollups(_ generator: inout SplitMix64) -> [Rollup] {
            let extremes: [Int64] = [0, 1, -1, 127, 128, -128, .max, .min, 9_990, -9_990]
            func number(_ generator: inout SplitMix64) -> Int64 {
                Bool.random(using: &generator) ? extremes.randomElement(using: &generator)! : Int64.random(in: -1_000_000...1_000_000, using: &generator)
            }
            return (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                Rollup(
                    key: RollupKey(
                        day: number(&generator), measure: measures.randomElement(using: &generator)!,
                        environment: [.production, .sandbox, AppStoreEnvironment(rawValue: "Elsewhere")].randomElement(using: &generator)!,
                        productId: words.randomElement(using: &generator)!, subscriptionGroup: words.randomElement(using: &generator)!,
                        storefront: words.randomElement(using: &generator)!, currency: words.randomElement(using: &generator)!,
                        offer: words.randomElement(using: &generator)!
                    ),
                    value: RollupValue(count: number(&generator), amount: number(&generator))
                )
            }
        }

        @Test("merging sums equal keys, drops zero sums and sorts by key, as summing by hash does")
        func merging() {
            var generator = SplitMix64(seed: 31)
            for _ in 0..<2_000 {
                // Few distinct keys, so that many repeat; figures that cancel, so that sums are zero.
                var rollups: [Rollup] = []
                for _ in 0..<4 { rollups += Self.randomRollups(&generator).prefix(3) }
                rollups += rollups.prefix(Int.random(in: 0...rollups.count, using: &generator)).map { Rollup(key: $0.key, value: RollupValue(count: 0 &- $0.value.count, amount: 0 &- $0.value.amount)) }
                rollups.shuffle(using: &generator)
                var sums: [RollupKey: RollupValue] = [:]
                for rollup in rollups { sums[rollup.key, default: RollupValue(count: 0)].add(rollup.value) }
                let expected = sums.filter { !$0.value.isZero }.map { Rollup(key: $0.key, value: $0.value) }.sorted { $0.key < $1.key }
                let merged = Rollup.merged(rollups)
                #expect(merged == expected)
                #expect(zip(merged, merged.dropFirst()).allSatisfy { $0.key < $1.key }, "strictly increasing keys")
            }
        }

        @Test("measures order by name, as the rollups' primary key does")
        func measureOrder() {
            let byName = RollupMeasure.allCases.sorted { $0.rawValue < $1.rawValue }
            #expect(RollupMeasure.allCases.sorted() == byName)
            for first in RollupMeasure.allCases {
                for second in RollupMeasure.allCases { #expect((first < second) == (first.rawValue < second.rawValue)) }
            }
        }

        @Test("any list of changes decodes to itself, in order")
        func roundTrip() throws {
            var generator = SplitMix64(seed: 29)
            for _ in 0..<2_000 {
                let rollups = Self.randomRollups(&generator)
                #expect(try RollupChanges.decode(RollupChanges.encode(rollups)) == rollups)
            }
        }

        /// A group commit queues its jobs' encodings back to back in one row.
        @Test("encodings back to back decode to every list in order")
        func backToBack() throws {
            var generator = SplitMix64(seed: 31)
            for _ in 0..<300 {
                let lists = (0..<Int.random(in: 1...6, using: &generator)).map { _ in Self.randomRollups(&generator) }
                let bytes = lists.flatMap(RollupChanges.encode)
                #expect(try RollupChanges.decode(bytes) == lists.flatMap { $0 })
            }
        }

        @Test("a batch with many distinct strings round-trips and stores each string once", arguments: [1, 15, 16, 17, 47, 48, 49, 120])
        func manyStrings(distinct: Int) throws {
            var generator = SplitMix64(seed: UInt64(distinct))
            // Products shared with the group field, more than a field's recent strings and, from
            // 49 on, than the strings searched one by one (then hashed).
            let rollups = (0..<600).map { position in
                let product = "product.\(Int.random(in: 0..<distinct, using: &generator))"
                return Rollup(
                    key: RollupKey(
                        day: Int64(position / 40), measure: Self.measures[position % Self.measures.count], environment: .production,
                        productId: product, subscriptionGroup: product, storefront: "USA", currency: "USD", offer: "none"
                    ),
                    value: RollupValue(count: 1, amount: Int64(position))
                )
            }
            let bytes = RollupChanges.encode(rollups)
            #expect(try RollupChanges.decode(bytes) == rollups)
            let expectedStrings = Set(rollups.map(\.key.productId)).count + Set(rollups.map(\.key.measure)).count + 4
            #expect(Int(bytes[1]) == expectedStrings, "the string table's count (one byte below 128)")
        }

        @Test("the fuzz target's seeds decode and round-trip")
        func fuzzSeeds() throws {
            for sample in RollupChangesFuzzing.samples() {
                let decoded = try RollupChangesFuzzing.decode(sample.bytes)
                #expect(decoded.count >= 3 && decoded.roundTrips, "\(sample.name)")
            }
        }

        @Test("truncated, extended, re-versioned or corrupted bytes are refused as a storage error")
        func damaged() throws {
            var generator = SplitMix64(seed: 17)
            var rollups: [Rollup] = []
            while rollups.count < 3 { rollups = Self.randomRollups(&generator) }
            let bytes = RollupChanges.encode(rollups)
            func refused(_ bytes: [UInt8], _ comment: Comment) {
                #expect(throws: LedgerError.self, comment) { _ = try RollupChanges.decode(bytes) }
                do { _ = try RollupChanges.decode(bytes) } catch { #expect(error.code == .storage, comment) }
            }
            for length in 0..<bytes.count { refused(Array(bytes.prefix(length)), "the first \(length) bytes") }
            refused(bytes + [0], "a byte after the end")
            refused(bytes + [1], "a second encoding cut short")
            refused(bytes + bytes.dropLast(), "a second encoding without its last byte")
            refused([2] + bytes.dropFirst(), "version 2")
            refused([1, 0, 1] + Array(repeating: 0, count: 10), "a string index with no strings")
            refused([1, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], "a varint beyond 64 bits")
            refused([1, 1, 2, 0xC3, 0x28, 0], "a string that is not UTF-8")
            refused([1, 1, 3, 0x61, 0x62, 0x63, 1] + Array(repeating: 0, count: 10), "a measure that is not one")
        }

        /// A ledger that queues (SQLite, PostgreSQL) has changes waiting after a write; folding
        /// takes them once; a read folds first; a rebuild drops the queue it recomputed.
        @Test("writes queue their changes, a fold adds each once, reads and rebuilds see them", arguments: LedgerBackend.all)
        func queueAndFold(backend: LedgerBackend) async throws {
            typealias Story = AnalyticsStory
            try await backend.withLedger(LedgerConfiguration(catalog: Story.catalog)) { ledger in
                let facts = AnalyticsConcurrency.facts(family: "q", account: "queued")
                try await Story.tell(Array(facts.prefix(6)), to: ledger)
                let queues = backend.kind != .memory
                let folded = try await ledger.foldRollupChanges(limit: 2)
                #expect(folded <= 2)
                let rest = try await ledger.foldRollupChanges(limit: 1_000)
                #expect(queues ? folded + rest >= 2 : folded + rest == 0)
                #expect(try await ledger.foldRollupChanges(limit: 1_000) == 0)
                let afterFolds = try await Story.allRollups(ledger)
                #expect(!afterFolds.isEmpty)
                try await ledger.rebuildRollups()
                #expect(try await Story.allRollups(ledger) == afterFolds)

                // A read folds what waits; nothing is left for the worker.
                try await Story.tell(Array(facts.dropFirst(6).prefix(6)), to: ledger)
                let read = try await Story.allRollups(ledger)
                #expect(try await ledger.foldRollupChanges(limit: 1_000) == 0)
                try await ledger.rebuildRollups()
                #expect(try await Story.allRollups(ledger) == read)

                // A rebuild reads the transactions whose changes wait, and drops the changes.
                try await Story.tell(Array(facts.dropFirst(12)), to: ledger)
                try await ledger.rebuildRollups()
                #expect(try await ledger.foldRollupChanges(limit: 1_000) == 0)
                let rebuilt = try await Story.allRollups(ledger)
                #expect(rebuilt != read)
                #expect(try await ledger.foldRollupChanges(limit: 0) == 0)
            }
        }

        /// Folds (from the worker of each of two instances), rebuilds and writers all at once
        /// on the same families: every queued change counts once.
        @Test("folds and rebuilds beside concurrent writers keep the rollups equal to a rebuild", arguments: LedgerBackend.all)
        func foldsBesideWriters(backend: LedgerBackend) async throws {
            typealias Story = AnalyticsStory
            try await backend.withStore { store in
                let configuration = LedgerConfiguration(catalog: Story.catalog)
                let ledgers = [try await store.open(configuration), try await store.open(configuration)]
                let facts = AnalyticsConcurrency.interleaved(families: (0..<3).map { "fold-\($0)" }, accounts: "f")
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (index, fact) in facts.enumerated() {
                        let ledger = ledgers[index % ledgers.count]
                        group.addTask { try await AnalyticsConcurrency.tell(fact, to: ledger) }
                        if index % 4 == 0 {
                            group.addTask { _ = try await ledger.foldRollupChanges(limit: 3) }
                        }
                        if index == facts.count / 2 {
                            group.addTask { try await ledgers[1].rebuildRollups() }
                        }
                    }
                    try await group.waitForAll()
                }
                let incremental = try await Story.allRollups(ledgers[0])
                #expect(!incremental.isEmpty)
                if backend.kind != .memory {
                    #expect(try await Story.allRollups(ledgers[1]) == incremental, "one store, two instances")
                }
                try await ledgers[0].rebuildRollups()
                #expect(try await Story.allRollups(ledgers[0]) == incremental)
            }
        }
    }
}
