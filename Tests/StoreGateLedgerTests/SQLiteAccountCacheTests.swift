import Foundation
import StoreGateCore
import StoreGateTestSupport
import Testing

@testable import StoreGateLedger
@testable import StoreGateLedgerSQLite

/// The SQLite ledger keeps recently read accounts while the file is unchanged: every commit —
/// by this ledger, by another ledger on the same file (another process), in any table — is seen
/// by the very next read, and the cache never holds more than its bounds.
@Suite("SQLite account cache")
struct SQLiteAccountCacheTests {
    static func temporaryPath() throws -> String {
        try TemporaryFiles.directory("account-cache").appendingPathComponent("ledger.sqlite").path
    }

    static func grant(_ account: AccountID, _ key: String) -> GrantRequest {
        GrantRequest(
            account: account, entitlement: "pro", term: .until(Purchases.date(1_000)), reason: "test", grantedBy: "support",
            idempotencyKey: key, startsAt: Purchases.date(1)
        )
    }

    @Test("a purchase, a consumption and a grant written by this ledger are each seen by the next read")
    func ownWritesAreSeen() async throws {
        let ledger = try SQLiteLedger(path: try Self.temporaryPath())
        let alice = Purchases.account("alice")
        try await ledger.record(Purchases.proof(Purchases.consumable("coins", quantity: 5)), for: alice)
        #expect(try await ledger.entitlementFacts(for: alice, at: Purchases.date(2)).holdings.balance(of: "coins") == 5)
        #expect(try await ledger.entitlementFacts(for: alice, at: Purchases.date(2)).holdings.balance(of: "coins") == 5)
        #expect(ledger.accountCache.usage.accounts == 1)

        _ = try await ledger.consume("coins", quantity: 2, idempotencyKey: "c1", for: alice, at: Purchases.date(3))
        #expect(try await ledger.entitlementFacts(for: alice, at: Purchases.date(4)).holdings.balance(of: "coins") == 3)

        #expect(try await ledger.entitlementFacts(for: alice, at: Purchases.date(4)).grants.isEmpty)
        _ = try await ledger.grant(Self.grant(alice, "g1"))
        #expect(try await ledger.entitlementFacts(for: alice, at: Purchases.date(4)).grants.count == 1)
        #expect(try await ledger.entitlements(for: alice, at: Purchases.date(4)).balance(of: "coins") == 3)
    }

    @Test("a write by another ledger on the same file (another process) is seen by the next read, for facts and for the whole account")
    func otherConnectionsWritesAreSeen() async throws {
        let path = try Self.temporaryPath()
        let reader = try SQLiteLedger(path: path)
        let writer = try SQLiteLedger(path: path)
        let bob = Purchases.account("bob")
        try await writer.record(Purchases.proof(Purchases.consumable("gems", product: "gems", quantity: 4)), for: bob)
        #expect(try await reader.entitlementFacts(for: bob, at: Purchases.date(2)).holdings.balance(of: "gems") == 4)
        #expect(try await reader.entitlements(for: bob, at: Purchases.date(2)).balance(of: "gems") == 4)
        #expect(reader.accountCache.usage.accounts == 1)

        _ = try await writer.consume("gems", quantity: 3, idempotencyKey: "c1", for: bob, at: Purchases.date(3))
        #expect(try await reader.entitlements(for: bob, at: Purchases.date(4)).balance(of: "gems") == 1)
        _ = try await writer.grant(Self.grant(bob, "g1"))
        #expect(try await reader.entitlementFacts(for: bob, at: Purchases.date(4)).grants.map(\.entitlement) == ["pro"])

        // A write to another account also empties the reader's cache (the version is the file's).
        try await writer.record(Purchases.proof(Purchases.nonConsumable("lifetime")), for: Purchases.account("carol"))
        #expect(try await reader.entitlementFacts(for: bob, at: Purchases.date(4)).grants.count == 1)
        #expect(reader.accountCache.usage.accounts == 1)
        await reader.close()
        await writer.close()
    }

    @Test("the version is read from the WAL-index header once the watch connection has read the WAL; every commit by any connection moves it, across a WAL restart")
    func headerVersionMovesWithEveryCommit() async throws {
        let path = try Self.temporaryPath()
        let reader = try SQLiteLedger(path: path)
        let writer = try SQLiteLedger(path: path)
        let dave = Purchases.account("dave")
        // The first check opens the watch connection and asks the pragma (nothing mapped yet).
        guard case .dataVersion = try reader.accountCache.lookUp(dave).version else {
            Issue.record("the first check did not ask PRAGMA data_version")
            return
        }
        let quiet = try reader.accountCache.lookUp(dave).version
        guard case .walIndex = quiet else {
            Issue.record("the check after the first did not read the WAL-index header: \(quiet)")
            return
        }
        #expect(try reader.accountCache.lookUp(dave).version == quiet, "no commit, same version")
        var seen: [SQLiteAccountCache.FileVersion] = [quiet]
        for index in 0..<24 {
            if index == 12 {
                // Everything copied back into the database and the WAL emptied: the next commit
                // starts the WAL again from its first frame, under new salts.
                let other = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 5_000)
                try other.query("PRAGMA wal_checkpoint(TRUNCATE)") { _ throws(LedgerError) in }
                other.close()
            }
            // Alternately this process's other ledger (another connection) and the reader's own.
            let ledger = index.isMultiple(of: 2) ? writer : reader
            try await ledger.record(Purchases.proof(Purchases.consumable("c\(index)", product: "coins", quantity: 1)), for: dave)
            let version = try reader.accountCache.lookUp(dave).version
            guard case .walIndex = version else {
                Issue.record("commit \(index): the check fell back to the pragma with nobody writing")
                continue
            }
            #expect(!seen.contains(version), "commit \(index) left the version at one already seen")
            seen.append(version)
            #expect(try await reader.entitlements(for: dave, at: Purchases.date(2)).balance(of: "coins") == index + 1)
        }
        await reader.close()
        await writer.close()
    }

    @Test("the cache holds at most its accounts and rows; an account heavier than a sixteenth of the rows is read, never kept")
    func bounded() async throws {
        let ledger = try SQLiteLedger(path: try Self.temporaryPath(), options: .init(cachedAccounts: 3, cachedRows: 64))
        for index in 0..<6 {
            try await ledger.record(Purchases.proof(Purchases.nonConsumable("p\(index)")), for: Purchases.account("a\(index)"))
        }
        let heavy = Purchases.account("heavy")
        for index in 0..<5 {
            try await ledger.record(Purchases.proof(Purchases.consumable("coins-\(index)", product: "coins-\(index)", quantity: 1)), for: heavy)
        }
        for index in 0..<6 {
            #expect(try await ledger.entitlements(for: Purchases.account("a\(index)"), at: Purchases.date(9)).nonConsumables.count == 1)
            #expect(ledger.accountCache.usage.accounts <= 3)
            #expect(ledger.accountCache.usage.records <= 64)
        }
        let before = ledger.accountCache.usage.accounts
        #expect(try await ledger.entitlements(for: heavy, at: Purchases.date(9)).consumables.count == 5)
        #expect(try await ledger.entitlements(for: heavy, at: Purchases.date(9)).consumables.count == 5)
        #expect(ledger.accountCache.usage.accounts == before)
    }

    @Test("holdings derived from a cached account hold until the subscription's expiry and the grace period's end, read after read")
    func derivedHoldingsFollowTheClock() async throws {
        let path = try Self.temporaryPath()
        let cached = try SQLiteLedger(path: path)
        let uncached = try SQLiteLedger(path: path, options: .init(cachedAccounts: 0))
        let erin = Purchases.account("erin")
        let period = Purchases.period("e1", original: "e1", start: 0, days: 30)
        let grace = Purchases.date(36)
        try await cached.record(
            Purchases.proof(period, renewal: Purchases.renewal(original: "e1", billingRetry: true, grace: grace, signed: Purchases.date(1))), for: erin
        )
        // Reads at increasing instants, each twice (the second from the derived holdings): before
        // the expiry, its last millisecond, the expiry, inside the grace period, its end, after.
        let instants = [
            Purchases.date(2), Purchases.date(29), Purchases.date(30).addingTimeInterval(-0.001), Purchases.date(30),
            Purchases.date(33), grace.addingTimeInterval(-0.001), grace, Purchases.date(90),
        ]
        _ = try await cached.entitlements(for: erin, at: Purchases.date(1))
        // The entry and its derived holdings; replacing the holdings later changes nothing.
        let held = cached.accountCache.usage
        var states: [SubscriptionEntitlement.State] = []
        for instant in instants {
            for _ in 0..<2 {
                let fromCache = try await cached.entitlementFacts(for: erin, at: instant).holdings
                #expect(fromCache == (try await uncached.entitlements(for: erin, at: instant)), "at \(instant)")
                #expect(fromCache.date == instant)
                #expect(try await cached.entitlements(for: erin, at: instant) == fromCache)
            }
            states.append(try await cached.entitlements(for: erin, at: instant).subscriptions.first?.state ?? .expired)
        }
        #expect(states == [.active, .active, .active, .inGracePeriod, .inGracePeriod, .inGracePeriod, .inBillingRetry, .inBillingRetry])
        #expect(cached.accountCache.usage == held)
        // A read at an earlier instant than the derived holdings' is derived again, not reused.
        #expect(try await cached.entitlements(for: erin, at: Purchases.date(3)).subscriptions.first?.state == .active)
        // A refund written afterwards is seen by the next read (the entry and its holdings go).
        try await cached.record(
            Purchases.proof(Purchases.period("e1", original: "e1", start: 0, days: 30, revoked: Purchases.date(4), signed: Purchases.date(5))), for: erin
        )
        #expect(try await cached.entitlements(for: erin, at: Purchases.date(6)).subscriptions.first?.state == .revoked)
        await cached.close()
        await uncached.close()
    }

    @Test("with the cache off every read goes to the file and answers the same")
    func off() async throws {
        let path = try Self.temporaryPath()
        let cached = try SQLiteLedger(path: path)
        let uncached = try SQLiteLedger(path: path, options: .init(cachedAccounts: 0))
        let dave = Purchases.account("dave")
        try await cached.record(Purchases.proof(Purchases.consumable("coins", quantity: 7)), for: dave)
        _ = try await cached.grant(Self.grant(dave, "g1"))
        let fromCache = try await cached.entitlementFacts(for: dave, at: Purchases.date(5))
        let fromFile = try await uncached.entitlementFacts(for: dave, at: Purchases.date(5))
        #expect(fromCache.holdings == fromFile.holdings)
        #expect(fromCache.grants == fromFile.grants)
        #expect(uncached.accountCache.usage.accounts == 0)
    }
}
