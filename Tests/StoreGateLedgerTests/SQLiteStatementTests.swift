import Foundation
import StoreGateCore
import Testing

@testable import StoreGateLedger
@testable import StoreGateLedgerSQLite

/// The SQLite ledger prepares each statement once per connection: an entitlement read binds
/// new values into cached statements and never compiles their SQL again.
@Suite("SQLite statements: compiled once, every parameter bound")
struct SQLiteStatementTests {
    static let alice = Purchases.account("alice")
    static let bob = Purchases.account("bob")

    /// A ledger file where alice holds a subscription (two periods, a renewal info, a
    /// notification), a consumable and a non-consumable, and bob a consumable.
    static func file() async throws -> String {
        let path = try SQLiteWriterTests.temporaryPath()
        let ledger = try SQLiteLedger(path: path)
        try await ledger.record(Purchases.proof([Purchases.consumable("c-1", quantity: 3), Purchases.nonConsumable("n-1")]), for: alice)
        try await ledger.record(Purchases.proof(Purchases.period("s-1", original: "s-1", start: 0)), for: alice)
        let renewal = Purchases.renewal(original: "s-1", signed: Purchases.date(31))
        try await ledger.record(Purchases.proof(Purchases.period("s-2", original: "s-1", start: 30), renewal: renewal), for: alice)
        try await ledger.apply(Purchases.notification(
            "n-uuid-1", type: "DID_RENEW", signed: Purchases.date(31), transaction: Purchases.period("s-2", original: "s-1", start: 30)
        ))
        try await ledger.record(Purchases.proof(Purchases.consumable("c-2", product: "gems")), for: bob)
        await ledger.close()
        return path
    }

    @Test("an account read after another reads the right rows with the same compiled statements")
    func accountReadsAreNotRecompiled() async throws {
        let path = try await Self.file()
        let connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 5000)
        defer { connection.close() }
        let nobody = Purchases.account("nobody")
        for account in [Self.alice, Self.bob, Self.alice, nobody, Self.alice, Self.bob] {
            let records = try connection.transaction(immediate: false) { () throws(LedgerError) in
                try SQLiteLedger.loadAccount(connection, account)
            }
            switch account {
            case Self.alice:
                #expect(Set(records.transactions.map(\.transactionId)) == ["c-1", "n-1", "s-1", "s-2"])
                #expect(records.renewals.keys.map(\.originalTransactionId) == ["s-1"])
                #expect(records.notifications.map(\.notificationUUID) == ["n-uuid-1"])
                #expect(records.balances.map(\.productId) == ["coins"])
            case Self.bob:
                #expect(records.transactions.map(\.transactionId) == ["c-2"])
                #expect(records.renewals.isEmpty && records.notifications.isEmpty)
                #expect(records.balances.map(\.productId) == ["gems"])
            default:
                #expect(records.transactions.isEmpty && records.balances.isEmpty)
            }
        }
        for statement in [SQLiteLedger.selectByAccount, SQLiteLedger.selectRenewalsOfAccount, SQLiteLedger.selectNotificationsOfAccount] {
            #expect(connection.recompilations(of: statement) == 0, "\(statement)")
        }
    }

    @Test("a statement given fewer or more values than it has parameters is refused, not run with the previous use's values")
    func everyParameterIsBound() async throws {
        let path = try await Self.file()
        let connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 5000)
        defer { connection.close() }
        let production = SQLiteValue.text(AppStoreEnvironment.production.rawValue)
        var rows = 0
        try connection.query(SQLiteLedger.selectByKey, [production, .text("c-2")]) { _ throws(LedgerError) in rows += 1 }
        #expect(rows == 1)
        for values: [SQLiteValue] in [[production], [], [production, .text("c-2"), .text("c-1")]] {
            do {
                try connection.query(SQLiteLedger.selectByKey, values) { _ throws(LedgerError) in rows += 1 }
                Issue.record("ran with \(values.count) values")
            } catch {
                #expect(error.code == .storage)
                #expect(error.reason.contains("2 parameters"), "\(error.reason)")
            }
        }
        #expect(rows == 1, "no refused query returned a row")
    }
}
