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
import StoreGateAppStoreClient
import StoreGateSync

@Suite("Two service instances on one PostgreSQL database", .serialized)
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
        let openedA = try LedgerOpener.open(configuration, logger: logger, connectTimeout: .seconds(60))
        let openedB = try LedgerOpener.open(configuration, logger: logger, connectTimeout: .seconds(60))
        #expect(openedA.ledger.backend == "postgres")
        #expect(openedA.services.count == 1, "PostgreSQL's pool runs as a service of the application")
        let appA = TestData.application(configuration, opened: openedA)
        let appB = TestData.application(configuration, opened: openedB)
        let receipt = try TestData.receipt(transactionPrefix: "91000000")
        let refund = try TestData.refund(transactionId: "9100000000000002")
        let consume = "/v1/accounts/pat/consumables/\(TestData.coins)/consume"

        try await appA.testRouter { a in
            try await appB.testRouter { b in
                let recorded = try await a.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "pat"))
                #expect(recorded.status == .ok)

                // B's first request may come before B's ledger is reachable on a loaded machine (both
                // instances migrate as they start): a 503 marked retryable is retried, as a client would.
                var replay = try await b.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "quinn"))
                let retryUntil = Date().addingTimeInterval(30)
                while replay.status == .serviceUnavailable, try replay.json["retryable"] as? Bool == true, Date() < retryUntil {
                    try await Task.sleep(for: .milliseconds(250))
                    replay = try await b.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "quinn"))
                }
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

    @Test(
        "three instances started at once on an empty database migrate once, all run their workers, and refresh the purchases made the moment they start",
        .enabled(if: shouldRun, "PostgreSQL server binaries are not installed (set STOREGATE_REQUIRE_POSTGRES=1 to fail instead)")
    )
    func freshDatabase() async throws {
        try await AppleStandIn.run { standIn in
            let server = try await TemporaryPostgres.launch(TemporaryPostgres.Options(fsync: false))
            defer { server.stop() }
            let (credentials, account) = AppleStandIn.ServerAPIAccount.makeTestPair(bundleId: TestData.bundleId)
            standIn.setServerAPIAccount(account)
            for environment in [AppStoreEnvironment.production, .sandbox] {
                standIn.updateServerAPIData(environment, bundleId: TestData.bundleId) { _ in }
            }
            var configuration = try TestData.configuration()
            configuration.database = .postgres(url: try await server.makeDatabase())
            configuration.serverAPICredentials = credentials
            configuration.appStoreEndpoints = standIn.serverAPIEndpoints
            configuration.syncSettings.interval = .seconds(1)
            configuration.refreshOnFirstSight = true
            var logger = Logger(label: "storegate.tests")
            logger.logLevel = .critical
            let apps = try (0..<3).map { _ in TestData.application(configuration, opened: try LedgerOpener.open(configuration, logger: logger, connectTimeout: .seconds(60))) }
            let purchases = 6
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, app) in apps.enumerated() {
                    group.addTask {
                        try await app.testRouter { client in
                            if index == 0 {
                                // Bought the moment the instance serves: each is refreshed on first sight.
                                for number in 0..<purchases {
                                    let signed = try TestData.signedTransaction(transactionId: "97000000000000\(10 + number)")
                                    let recorded = try await client.send(
                                        .post, "/v1/transactions/verify", key: TestData.fullKey,
                                        body: try TestData.json(["signedTransaction": signed, "account": "fresh-\(number)"])
                                    )
                                    #expect(recorded.status == .ok)
                                }
                            }
                            // Every worker of every instance completes a round within seconds.
                            // One probe may miss readiness's 900 ms database deadline while three
                            // instances start on a loaded machine (a 503 that is right for a probe):
                            // the instance must be ready once its workers are, not at every probe.
                            var workers: [[String: Any]] = []
                            var ready: TestResponse?
                            for _ in 0..<300 {
                                let reply = try await client.send(.get, "/readyz")
                                ready = reply
                                workers = member(try reply.json, "checks", "workers", "workers") as? [[String: Any]] ?? []
                                if reply.status == .ok, !workers.isEmpty,
                                   workers.allSatisfy({ ($0["rounds"] as? Int ?? 0) > ($0["failures"] as? Int ?? 0) }) { break }
                                try await Task.sleep(for: .milliseconds(200))
                            }
                            #expect(ready?.status == .ok, "instance \(index): \(ready?.text ?? "no reply")")
                            let names = Set(workers.compactMap { $0["name"] as? String })
                            #expect(names.isSuperset(of: ["subscription_clock", "first_sight_refresh", "appstore_sync/Production", "appstore_sync/Sandbox"]), "\(names)")
                            for worker in workers {
                                #expect((worker["rounds"] as? Int ?? 0) > (worker["failures"] as? Int ?? 0), "instance \(index): \(worker)")
                                #expect(worker["status"] as? String == "ok", "instance \(index): \(worker)")
                            }
                            if index == 0 {
                                var refreshed = 0
                                for _ in 0..<600 {
                                    refreshed = standIn.serverAPICalls.filter { $0.route == "inApps/v2/history" }.count
                                    if refreshed >= purchases { break }
                                    try await Task.sleep(for: .milliseconds(50))
                                }
                                #expect(refreshed >= purchases, "purchases recorded as the instances started were not all refreshed")
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
    }
}
