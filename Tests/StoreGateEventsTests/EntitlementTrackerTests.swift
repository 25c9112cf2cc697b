import Foundation
import Logging
import StoreGateCore
@testable import StoreGateEvents
@testable import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateLedgerSQLite
import StoreGateTestSupport
import Synchronization
import Testing

/// entitlement.changed: announced once per change, by time too, and replaying them gives the
/// account's entitlements (issue 28 item 5).
@Suite("Entitlement changes")
struct EntitlementTrackerTests {
    static let logger = Logger(label: "test.entitlements")
    static var alice: AccountID { get throws { try AccountID("alice") } }

    static let catalog = ProductCatalog(entitlements: [
        "pro": EntitlementDefinition(products: ["pro.monthly", "pro.lifetime"]),
        "coins": EntitlementDefinition(currency: ["coins": 10]),
    ])

    /// A settable clock.
    final class Clock: Sendable {
        let date: Mutex<Date>
        init(_ date: Date) { self.date = Mutex(date.ledgerNormalized) }
        func now() -> Date { date.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { date.withLock { $0 = $0.addingTimeInterval(seconds).ledgerNormalized } }
    }

    static func transaction(
        _ id: String, product: String, type: ProductType, purchased: Date, expires: Date? = nil, revoked: Date? = nil, signed: Date? = nil
    ) -> VerifiedTransaction {
        VerifiedTransaction(
            environment: .production, bundleId: "com.example.app", transactionId: id, originalTransactionId: id, productId: product,
            productType: type, quantity: 1, purchaseDate: purchased, originalPurchaseDate: purchased, expiresDate: expires,
            revocationDate: revoked, revocationReason: revoked == nil ? nil : 0, webOrderLineItemId: nil,
            subscriptionGroupIdentifier: type == .autoRenewable ? "pro" : nil, appAccountToken: nil, isUpgraded: false,
            signedDate: signed ?? purchased, source: .signedTransaction
        )
    }

    static func proof(_ transaction: VerifiedTransaction) -> VerifiedProof {
        VerifiedProof(
            kind: .signedTransaction, environment: .production, bundleId: "com.example.app", signedDate: transaction.signedDate,
            transactions: [transaction], renewalInfo: nil, rawProof: Array("proof:\(transaction.transactionId):\(transaction.signedDate.timeIntervalSince1970)".utf8)
        )
    }

    /// The ledgers the story runs on: memory, SQLite, and PostgreSQL where it is installed.
    static func withLedgers(_ body: (any Ledger, Clock) async throws -> Void) async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let memoryClock = Clock(start)
        try await body(InMemoryLedger(configuration: LedgerConfiguration(now: { memoryClock.now() })), memoryClock)
        let sqliteClock = Clock(start)
        let directory = try TemporaryFiles.directory("entitlement-tracker")
        let sqlite = try SQLiteLedger(path: directory.appendingPathComponent("ledger.sqlite").path, configuration: LedgerConfiguration(now: { sqliteClock.now() }))
        try await body(sqlite, sqliteClock)
        await sqlite.close()
        guard TemporaryPostgres.isAvailable || TemporaryPostgres.isRequired else { return }
        let server = try await TemporaryPostgres.launch(TemporaryPostgres.Options(fsync: false))
        defer { server.stop() }
        let postgresClock = Clock(start)
        let postgres = try await PostgresLedger.connect(
            url: try await server.makeDatabase(), configuration: LedgerConfiguration(now: { postgresClock.now() }), maximumConnections: 4
        )
        try await body(postgres, postgresClock)
        await postgres.close()
    }

    static func changes(_ ledger: any Ledger, after: Int64 = 0) async throws -> [LedgerEvent] {
        if let postgres = ledger as? PostgresLedger { try await postgres.settleEvents(within: .seconds(60)) }
        var events: [LedgerEvent] = []
        var last = after
        while let page = Optional(try await ledger.events(after: last, limit: 1000)), let end = page.last {
            events += page
            last = end.sequence
        }
        return events.filter { $0.type == .entitlementChanged }
    }

    /// Each announced change as `identifier:isActive`.
    static func summary(_ events: [LedgerEvent]) -> [String] {
        events.map { "\($0.productId):\($0.change?.after.isActive ?? false)" }
    }

    /// Runs the tracker until it has nothing more to do.
    static func settle(_ tracker: EntitlementTracker, _ ledger: any Ledger) async throws {
        if let postgres = ledger as? PostgresLedger { try await postgres.settleEvents(within: .seconds(60)) }
        for _ in 0..<20 {
            guard try await tracker.track() else { return }
            if let postgres = ledger as? PostgresLedger { try await postgres.settleEvents(within: .seconds(60)) }
        }
    }

    @Test("a purchase, an end by time, a grant, a lifetime purchase and its refund are each announced once, and replay to the account's entitlements")
    func story() async throws {
        try await Self.withLedgers { ledger, clock in
            let tracker = EntitlementTracker(ledger: ledger, catalog: { Self.catalog }, holder: "one", logger: Self.logger, now: { clock.now() })
            try await tracker.initializePlace()
            let start = clock.now()
            var expected: [String] = []

            try await ledger.record(Self.proof(Self.transaction("m1", product: "pro.monthly", type: .autoRenewable, purchased: start.addingTimeInterval(-86_400), expires: start.addingTimeInterval(3600))), for: try Self.alice)
            try await Self.settle(tracker, ledger)
            expected.append("pro:true")
            var announced = try await Self.changes(ledger)
            #expect(Self.summary(announced) == expected)
            #expect(announced.last?.change?.before == nil && announced.last?.change?.after.expiresAt == start.addingTimeInterval(3600))
            #expect(announced.last?.source == "signed_transaction" && announced.last?.transactionId == "m1")

            // Nothing new: nothing announced again.
            try await Self.settle(tracker, ledger)
            #expect(try await Self.changes(ledger).count == 1)

            // The period ends with no request: the tracker notices by time.
            clock.advance(7200)
            try await Self.settle(tracker, ledger)
            expected.append("pro:false")
            announced = try await Self.changes(ledger)
            #expect(Self.summary(announced) == expected)
            #expect(announced.last?.source == "time" && announced.last?.occurredAt == start.addingTimeInterval(3600))
            #expect(announced.last?.change?.before?.isActive == true)

            // A grant, then a lifetime purchase (the end moves to never), then its refund (back to the grant's end).
            let grant = try await ledger.grant(GrantRequest(
                account: try Self.alice, entitlement: "pro", term: .duration(.seconds(86_400)), reason: "goodwill", grantedBy: "support",
                idempotencyKey: "g1", startsAt: clock.now()
            )).grant
            try await Self.settle(tracker, ledger)
            clock.advance(60)
            let lifetime = Self.transaction("l1", product: "pro.lifetime", type: .nonConsumable, purchased: clock.now())
            try await ledger.record(Self.proof(lifetime), for: try Self.alice)
            try await Self.settle(tracker, ledger)
            clock.advance(60)
            let refunded = Self.transaction("l1", product: "pro.lifetime", type: .nonConsumable, purchased: lifetime.purchaseDate, revoked: clock.now(), signed: clock.now())
            try await ledger.apply(VerifiedNotification(
                notificationUUID: "refund-l1", notificationType: "REFUND", subtype: nil, signedDate: clock.now(), environment: .production,
                bundleId: "com.example.app", transaction: refunded, renewalInfo: nil, rawProof: Array("refund-l1".utf8)
            ))
            try await Self.settle(tracker, ledger)
            announced = try await Self.changes(ledger)
            #expect(announced.count == 5)
            #expect(announced.suffix(3).map(\.change?.after.source) == [.grant, .product, .grant])
            #expect(announced.suffix(3).map(\.change?.after.expiresAt) == [grant.expiresAt, nil, grant.expiresAt])

            // Replaying entitlement.changed alone gives the account's entitlements now.
            var replayed: [String: EntitlementSnapshot.Item] = [:]
            for event in announced { if let change = event.change { replayed[change.entitlement] = change.after } }
            let now = EntitlementResolver.resolve(
                try await ledger.entitlements(for: try Self.alice, at: clock.now()), catalog: Self.catalog, grants: try await ledger.grants(for: try Self.alice), at: clock.now()
            )
            for entitlement in now where entitlement.isActive || entitlement.source != nil {
                #expect(replayed[entitlement.identifier]?.isActive == entitlement.isActive, "\(entitlement.identifier)")
                #expect(replayed[entitlement.identifier]?.expiresAt == entitlement.expiresAt, "\(entitlement.identifier)")
            }
            #expect(replayed["coins"] == nil, "coins never unlocked: never announced")
        }
    }

    @Test("a round out of time commits the accounts it looked at and moves its place only past their events; the next rounds go on, and each change is announced once")
    func roundTime() async throws {
        try await Self.withLedgers { ledger, clock in
            // No time at all: one account a round.
            let tracker = EntitlementTracker(
                ledger: ledger, catalog: { Self.catalog }, holder: "one", roundTime: .zero, logger: Self.logger, now: { clock.now() }
            )
            try await tracker.initializePlace()
            let accounts = try (0..<3).map { try AccountID("user-\($0)") }
            for (index, account) in accounts.enumerated() {
                try await ledger.record(Self.proof(Self.transaction("t\(index)", product: "pro.lifetime", type: .nonConsumable, purchased: clock.now())), for: account)
            }
            // user-0 again, after the others: its first event decides where the place may go.
            try await ledger.record(Self.proof(Self.transaction("t3", product: "pro.monthly", type: .autoRenewable, purchased: clock.now(), expires: clock.now().addingTimeInterval(3600))), for: accounts[0])
            if let postgres = ledger as? PostgresLedger { try await postgres.settleEvents(within: .seconds(60)) }
            var announcedAccounts: [String] = []
            for round in 1...3 {
                #expect(try await tracker.track(), "round \(round) moved")
                let announced = try await Self.changes(ledger)
                #expect(announced.count == round, "round \(round): one account a round")
                announcedAccounts = announced.map(\.account.rawValue)
            }
            #expect(announcedAccounts == ["user-0", "user-1", "user-2"])
            try await Self.settle(tracker, ledger)
            let announced = try await Self.changes(ledger)
            #expect(Self.summary(announced) == ["pro:true", "pro:true", "pro:true"], "each account's change once, none lost, none twice")
            #expect(Set(announced.map(\.account)) == Set(accounts))
            #expect(try await tracker.track() == false, "nothing left")
        }
    }

    @Test("two trackers on one ledger announce each change once")
    func twoTrackers() async throws {
        try await Self.withLedgers { ledger, clock in
            let one = EntitlementTracker(ledger: ledger, catalog: { Self.catalog }, holder: "one", logger: Self.logger, now: { clock.now() })
            let two = EntitlementTracker(ledger: ledger, catalog: { Self.catalog }, holder: "two", logger: Self.logger, now: { clock.now() })
            try await one.initializePlace()
            try await two.initializePlace()
            for index in 0..<5 {
                try await ledger.record(Self.proof(Self.transaction("n\(index)", product: "pro.lifetime", type: .nonConsumable, purchased: clock.now())), for: try AccountID("user-\(index)"))
            }
            async let first: Void = Self.settle(one, ledger)
            async let second: Void = Self.settle(two, ledger)
            _ = try await (first, second)
            try await Self.settle(one, ledger)
            let announced = try await Self.changes(ledger)
            #expect(announced.count == 5)
            #expect(Set(announced.map(\.account.rawValue)).count == 5)
        }
    }
}
