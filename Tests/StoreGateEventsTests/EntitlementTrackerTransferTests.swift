import Foundation
import Logging
import StoreGateCore
@testable import StoreGateEvents
@testable import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateLedgerSQLite
import StoreGateTestSupport
import Testing

/// entitlement.changed after a transfer (issue 28 items 4 and 5): a purchase that moves flips
/// the entitlement on both accounts, and the tracker announces both.
@Suite("Entitlement changes: transfers")
struct EntitlementTrackerTransferTests {
    typealias Tracker = EntitlementTrackerTests

    /// The ledgers the story runs on, under the transfer policy: memory, SQLite, and PostgreSQL
    /// where it is installed (required with STOREGATE_REQUIRE_POSTGRES=1).
    static func withLedgers(_ body: (any Ledger, Tracker.Clock) async throws -> Void) async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let memoryClock = Tracker.Clock(start)
        try await body(InMemoryLedger(configuration: LedgerConfiguration(transferPolicy: .transfer, now: { memoryClock.now() })), memoryClock)
        let sqliteClock = Tracker.Clock(start)
        let directory = try TemporaryFiles.directory("entitlement-tracker-transfers")
        let sqlite = try SQLiteLedger(
            path: directory.appendingPathComponent("ledger.sqlite").path, configuration: LedgerConfiguration(transferPolicy: .transfer, now: { sqliteClock.now() })
        )
        try await body(sqlite, sqliteClock)
        await sqlite.close()
        guard TemporaryPostgres.isAvailable || TemporaryPostgres.isRequired else { return }
        let server = try await TemporaryPostgres.launch(TemporaryPostgres.Options(fsync: false))
        defer { server.stop() }
        let postgresClock = Tracker.Clock(start)
        let postgres = try await PostgresLedger.connect(
            url: try await server.makeDatabase(), configuration: LedgerConfiguration(transferPolicy: .transfer, now: { postgresClock.now() }),
            maximumConnections: 4
        )
        try await body(postgres, postgresClock)
        await postgres.close()
    }

    /// The account's `pro` entitlement now, as the catalog derives it.
    static func pro(_ ledger: any Ledger, _ account: AccountID, at date: Date) async throws -> Entitlement? {
        EntitlementResolver.resolve(
            try await ledger.entitlements(for: account, at: date), catalog: Tracker.catalog, grants: try await ledger.grants(for: account), at: date
        ).first { $0.identifier == "pro" }
    }

    @Test("a restore that moves a purchase, then support moving it back, each flip the entitlement on both accounts, announced once each, and replay to both accounts' entitlements")
    func transfersAnnounceBothAccounts() async throws {
        try await Self.withLedgers { ledger, clock in
            let alice = try AccountID("alice"), bob = try AccountID("bob")
            let tracker = EntitlementTracker(ledger: ledger, catalog: { Tracker.catalog }, holder: "one", logger: Tracker.logger, now: { clock.now() })
            try await tracker.initializePlace()
            let lifetime = Tracker.transaction("l1", product: "pro.lifetime", type: .nonConsumable, purchased: clock.now().addingTimeInterval(-86_400))
            try await ledger.record(Tracker.proof(lifetime), for: alice)
            try await Tracker.settle(tracker, ledger)
            var announced = try await Tracker.changes(ledger)
            #expect(announced.map(\.account) == [alice] && Tracker.summary(announced) == ["pro:true"])

            // Bob restores the same purchase: it moves, alice loses pro and bob gains it.
            clock.advance(60)
            let outcome = try await ledger.record(Tracker.proof(lifetime), for: bob)
            #expect(outcome.transferredOriginalTransactionIds == ["l1"])
            try await Tracker.settle(tracker, ledger)
            announced = try await Tracker.changes(ledger)
            #expect(announced.count == 3)
            let restore = Array(announced.suffix(2)).sorted { $0.account.rawValue < $1.account.rawValue }
            #expect(restore.map(\.account) == [alice, bob])
            #expect(Tracker.summary(restore) == ["pro:false", "pro:true"])
            #expect(restore.map(\.change?.before?.isActive) == [true, nil], "alice's was announced before; bob's never")
            #expect(restore.allSatisfy { $0.source == ProofKind.signedTransaction.rawValue }, "caused by the proof that moved it")
            #expect(restore.last?.change?.after.source == .product && restore.last?.change?.after.productId == "pro.lifetime")

            // Nothing new: nothing announced again.
            try await Tracker.settle(tracker, ledger)
            #expect(try await Tracker.changes(ledger).count == 3)

            // Support moves it back by hand: both flip again, caused by the transfer.
            clock.advance(60)
            try await ledger.transfer(TransferRequest(
                environment: .production, originalTransactionId: "l1", account: alice, reason: "ticket 5: shared device", transferredBy: "support",
                date: clock.now()
            ))
            try await Tracker.settle(tracker, ledger)
            announced = try await Tracker.changes(ledger)
            #expect(announced.count == 5)
            let back = Array(announced.suffix(2)).sorted { $0.account.rawValue < $1.account.rawValue }
            #expect(Tracker.summary(back) == ["pro:true", "pro:false"])
            #expect(back.allSatisfy { $0.source == LedgerEvent.transferSource })

            // Replaying entitlement.changed alone gives each account's entitlement now.
            for account in [alice, bob] {
                var replayed: EntitlementSnapshot.Item?
                for event in announced where event.account == account { replayed = event.change?.after }
                let now = try #require(try await Self.pro(ledger, account, at: clock.now()))
                #expect(replayed?.isActive == now.isActive && replayed?.expiresAt == now.expiresAt, "\(account)")
            }
            #expect(try await Self.pro(ledger, alice, at: clock.now())?.isActive == true)
            #expect(try await Self.pro(ledger, bob, at: clock.now())?.isActive == false)
        }
    }

    @Test("a refused restore (the refuse policy's 409) announces nothing for either account")
    func refusedRestoreAnnouncesNothing() async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let clock = Tracker.Clock(start)
        let ledger = InMemoryLedger(configuration: LedgerConfiguration(transferPolicy: .refuse, now: { clock.now() }))
        let tracker = EntitlementTracker(ledger: ledger, catalog: { Tracker.catalog }, holder: "one", logger: Tracker.logger, now: { clock.now() })
        try await tracker.initializePlace()
        let lifetime = Tracker.transaction("l1", product: "pro.lifetime", type: .nonConsumable, purchased: start)
        try await ledger.record(Tracker.proof(lifetime), for: try AccountID("alice"))
        try await Tracker.settle(tracker, ledger)
        let refused = await #expect(throws: LedgerError.self) { try await ledger.record(Tracker.proof(lifetime), for: try AccountID("bob")) }
        #expect(refused?.code == .ownedByAnotherAccount)
        try await Tracker.settle(tracker, ledger)
        let announced = try await Tracker.changes(ledger)
        #expect(announced.map(\.account.rawValue) == ["alice"])
    }
}
