import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import StoreGateCore
import StoreGateTestSupport
import Testing

@testable import StoreGateServer
import StoreGateLedger

@Suite("Two service instances on one PostgreSQL database")
struct PostgresInstancesTests {
    static let shouldRun = TemporaryPostgres.isAvailable || TemporaryPostgres.isRequired

    @Test(
        "a purchase recorded through one instance is owned, consumed and refunded consistently through the other",
        .enabled(if: shouldRun, "PostgreSQL server binaries are not installed (set STOREGATE_REQUIRE_POSTGRES=1 to fail instead)")
    )
    func sharedLedger() async throws {
        let server = try await TemporaryPostgres.launch(TemporaryPostgres.Options(fsync: false))
        defer { server.stop() }  // pg_ctl stop -m immediate: a fraction of a second
        var configuration = try TestData.configuration()
        configuration.database = .postgres(url: try await server.makeDatabase())
        var logger = Logger(label: "storegate.tests")
        logger.logLevel = .critical
        // Both instances open (and migrate, as they start) the same database, as `storegate serve` does.
        let openedA = try LedgerOpener.open(configuration, logger: logger)
        let openedB = try LedgerOpener.open(configuration, logger: logger)
        #expect(openedA.ledger.backend == "postgres")
        #expect(openedA.services.count == 1, "PostgreSQL's pool runs as a service of the application")
        let appA = TestData.application(configuration, opened: openedA)
        let appB = TestData.application(configuration, opened: openedB)
        let receipt = try TestData.receipt(transactionPrefix: "91000000")
        let refund = try TestData.refund(transactionId: "9100000000000002")
        let consume = "/v1/accounts/pat/consumables/\(TestData.coins)/consume"

        try await appA.test(.router) { a in
            try await appB.test(.router) { b in
                let recorded = try await a.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "pat"))
                #expect(recorded.status == .ok)

                let replay = try await b.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "quinn"))
                #expect(replay.status == .conflict)
                #expect(replay.code == "owned_by_another_account")

                let seen = try await b.send(.get, "/v1/accounts/pat/entitlements", key: TestData.readerKey)
                #expect(member(try seen.json, "entitledProductIds") as? [String] == [TestData.coins, TestData.pro])

                // The same consumption sent to both instances consumes once.
                let first = try await a.send(.post, consume, key: TestData.fullKey, body: try TestData.json(["quantity": 4, "idempotencyKey": "pg-1"]))
                let again = try await b.send(.post, consume, key: TestData.fullKey, body: try TestData.json(["quantity": 4, "idempotencyKey": "pg-1"]))
                #expect(try first.json["remaining"] as? Int == 1)
                #expect(try again.json["isReplay"] as? Bool == true)
                let tooMany = try await b.send(.post, consume, key: TestData.fullKey, body: try TestData.json(["quantity": 2, "idempotencyKey": "pg-2"]))
                #expect(tooMany.code == "insufficient_balance")

                // A notification taken by one instance is a duplicate for the other.
                let stored = try await b.send(.post, "/v1/notifications/apple", body: try TestData.json(["signedPayload": refund]))
                #expect(try stored.json["isDuplicate"] as? Bool == false)
                let duplicate = try await a.send(.post, "/v1/notifications/apple", body: try TestData.json(["signedPayload": refund]))
                #expect(try duplicate.json["isDuplicate"] as? Bool == true)
                let after = try await a.send(.get, "/v1/accounts/pat/entitlements", key: TestData.readerKey)
                #expect(member(try after.json, "entitledProductIds") as? [String] == [TestData.coins])

                let ready = try await a.send(.get, "/readyz")
                #expect(member(try ready.json, "checks", "database", "backend") as? String == "postgres")
            }
        }
    }
}
