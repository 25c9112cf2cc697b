import Foundation
import StoreGateCore
import StoreGateLedger

extension ScaleBenchmark {
    /// One round of every operation on `ledger` (operations `first..<first + 2 × count`:
    /// each round writes its own purchases, consumptions and notifications), added to
    /// `results` unless it is the warm-up.
    ///
    /// `tag` prefixes the ids the round writes (purchases, consumptions' keys, notifications),
    /// so that a run on a ledger an earlier run measured writes new ones.
    ///
    /// `direct` is the same ledger opened without its account cache (SQLite): the check and
    /// the whole-account read are measured on both, through the cache as the service is
    /// configured (what an app sees, which depends on how many of the accounts read the cache
    /// holds) and with every read from the database (what the database costs at this size).
    /// Only the second is held to `--fail-above` when there is a cache: the first, at a size
    /// whose accounts the cache holds against one where it holds few, compares hit rates.
    static func measureRound(
        _ ledger: any Ledger, direct: (any Ledger)?, size: Int, first: Int, count n: Int, tag: String = "", into results: Results?
    ) async throws {
        let accounts = max(1, size / 10)
        let account: @Sendable (Int) throws -> AccountID = { index in try AnalyticsWorkload.account(Int32((index &* 2_654_435_761) % accounts)) }
        let single = first..<(first + n)
        func figure(
            _ operation: String, hold: Hold = .ratio, tasks: Int = 1, _ indices: Range<Int>,
            _ body: @escaping @Sendable (Int) async throws -> Void
        ) async throws {
            let measured = try await LedgerBenchmark.measure(tasks: tasks, indices: indices, body)
            results?.add(size, operation, hold: hold, latencies: measured.latencies, seconds: measured.seconds)
        }
        let now = Self.now
        let catalog = AnalyticsWorkload.catalog

        try await figure(Self.check, hold: direct == nil ? .ratio : .none, single) { index in
            let facts = try await ledger.entitlementFacts(for: try account(index), at: now)
            _ = EntitlementResolver.resolve("pro", holdings: facts.holdings, catalog: catalog, grants: facts.grants, at: now)
        }
        try await figure(Self.accountRead, hold: direct == nil ? .ratio : .none, single) { index in
            _ = try await ledger.entitlements(for: try account(index), at: now)
        }
        if let direct {
            // Accounts no line of this round has read (the next rounds' ranges): an account the
            // cached line just read would still be in the pages the database cached for it.
            try await figure(Self.checkFromDatabase, (first + 2 * n)..<(first + 3 * n)) { index in
                let facts = try await direct.entitlementFacts(for: try account(index), at: now)
                _ = EntitlementResolver.resolve("pro", holdings: facts.holdings, catalog: catalog, grants: facts.grants, at: now)
            }
            try await figure(Self.accountReadFromDatabase, (first + 3 * n)..<(first + 4 * n)) { index in
                _ = try await direct.entitlements(for: try account(index), at: now)
            }
        }
        for writers in [1, 16] {
            let range = writers == 1 ? single : (first + n)..<(first + 2 * n)
            try await figure("record a purchase, \(writers) writer\(writers == 1 ? "" : "s")", tasks: writers, range) { index in
                _ = try await ledger.record(try purchase(index, tag: tag), for: try account(index))
            }
        }
        // The units the one-writer purchases above bought, one each.
        try await figure("consume a unit, 1 writer", single) { index in
            _ = try await ledger.consume("coins.small", quantity: 1, idempotencyKey: "scale-consume-\(tag)\(index)", for: try account(index), at: now)
        }
        try await figure("apply a synced notification, 1 writer", single) { index in
            let subscriber = Int32((index &* 2_654_435_761) % accounts)
            _ = try await ledger.apply(VerifiedNotification(
                notificationUUID: "scale-sync-\(tag)\(index)", notificationType: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED",
                signedDate: now, environment: .production, bundleId: AnalyticsWorkload.bundleId, transaction: nil,
                renewalInfo: VerifiedRenewalInfo(
                    environment: .production, originalTransactionId: "s\(subscriber)-pro", productId: "pro.monthly",
                    autoRenewProductId: "pro.monthly", willAutoRenew: true, expirationIntent: nil, isInBillingRetryPeriod: false,
                    gracePeriodExpiresDate: nil, renewalDate: nil, signedDate: now
                ),
                rawProof: Array("scale-sync-\(tag)\(index)".utf8)
            ))
        }
        let head = try await newestSequence(ledger)
        try await figure("a page of 100 events", single) { index in
            let after = Int64((UInt64(index) &* 2_654_435_761) % UInt64(max(1, head - 100)))
            _ = try await ledger.events(after: after, limit: 100)
        }
        try await figure("console: account page", hold: .page, single) { index in
            let id = try account(index)
            _ = try await ledger.entitlements(for: id, at: now)
            _ = try await ledger.grants(for: id)
            _ = try await ledger.timeline(for: id, before: nil, limit: 101)
        }
        try await figure("console: search an account", hold: .page, single) { index in
            let id = try account(index)
            _ = try await ledger.timeline(for: id, before: nil, limit: 1)
            _ = try await ledger.entitlements(for: id, at: now)
            _ = try await ledger.search(id.rawValue, limit: 50)
        }
        try await figure("console: search a transaction id", hold: .page, single) { index in
            _ = try await ledger.search("s\((index &* 2_654_435_761) % accounts)-0", limit: 50)
        }
        let today = AnalyticsWorkload.lastDay
        let from = AnalyticsDay(today.number - 89)
        try await figure("console: overview (8 series, 90 days)", hold: .page, first..<(first + max(3, n / 20))) { _ in
            for metric in [AnalyticsMetric.activeSubscriptions, .mrr, .newTrials, .trialConversions, .newPaidSubscriptions, .churned, .refunds, .grossRevenue] {
                _ = try await ledger.series(try AnalyticsQuery(metric: metric, from: from, to: today, interval: .week), today: today)
            }
            _ = try await ledger.activity(days: 90, endingAt: now)
        }
    }

    /// A consumable purchase for the measuring phase (operation `index` of the run `tag`, its own id).
    static func purchase(_ index: Int, tag: String = "") throws -> VerifiedProof {
        let transaction = VerifiedTransaction(
            environment: .production, bundleId: AnalyticsWorkload.bundleId, transactionId: "scale-\(tag)\(index)",
            originalTransactionId: "scale-\(tag)\(index)", productId: "coins.small", productType: .consumable, quantity: 1,
            purchaseDate: now, originalPurchaseDate: now, expiresDate: nil, revocationDate: nil, revocationReason: nil,
            webOrderLineItemId: nil, subscriptionGroupIdentifier: nil, appAccountToken: nil, isUpgraded: false, signedDate: now,
            source: .signedTransaction, money: MoneyFacts(price: 990, currency: "USD", storefront: "USA", transactionReason: "PURCHASE")
        )
        return VerifiedProof(
            kind: .signedTransaction, environment: .production, bundleId: AnalyticsWorkload.bundleId, signedDate: now,
            transactions: [transaction], rawProof: Array("scale-\(tag)\(index):".utf8)
        )
    }

    /// The figures' names (the smoke test and `--fail-above`'s message use them).
    static let check = "one entitlement (the check), 1 reader"
    static let accountRead = "entitlements of an account, 1 reader"
    static let checkFromDatabase = "the check, every read from the database"
    static let accountReadFromDatabase = "account's entitlements, from the database"
}
