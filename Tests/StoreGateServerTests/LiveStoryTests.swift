import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ServiceLifecycle
import StoreGateCore
import StoreGateLedger
import StoreGateTestSupport
import Synchronization
import Testing

@testable import StoreGateServer
import StoreGateLedgerSQLite

@Suite("The service on 127.0.0.1, port 0, with a SQLite ledger")
struct LiveStoryTests {
    @Test("receipt recorded, entitlement visible, consumable consumed, REFUND revokes, a second delivery changes nothing, /verifyReceipt answers like Apple")
    func fullStory() async throws {
        let configuration = try TestData.configuration()
        let ledger = try TestData.sqliteLedger(configuration: configuration)
        let (app, _) = TestData.application(configuration, ledger: ledger)
        let receipt = try TestData.receipt(transactionPrefix: "71000000")
        let refund = try TestData.refund(transactionId: "7100000000000002")
        try await app.test(.live) { client in
            #expect(client.port != nil && client.port != 0)

            // A minted receipt is verified and recorded.
            let verified = try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "zoe"))
            #expect(verified.status == .ok)
            #expect(member(try verified.json, "recorded", "newTransactionIds") as? [String] == ["7100000000000001", "7100000000000002"])

            // Its entitlements are visible.
            let before = try await client.send(.get, "/v1/accounts/zoe/entitlements", key: TestData.readerKey)
            #expect(member(try before.json, "entitledProductIds") as? [String] == [TestData.coins, TestData.pro])

            // A consumable is consumed.
            let consumed = try await client.send(
                .post, "/v1/accounts/zoe/consumables/\(TestData.coins)/consume", key: TestData.fullKey,
                body: try TestData.json(["quantity": 3, "idempotencyKey": "story-1"])
            )
            #expect(consumed.status == .ok)
            #expect(try consumed.json["remaining"] as? Int == 2)

            // A REFUND notification revokes the non-consumable.
            let first = try await client.send(.post, "/v1/notifications/apple", body: try TestData.json(["signedPayload": refund]))
            #expect(first.status == .ok)
            #expect(try first.json["isDuplicate"] as? Bool == false)
            let afterRefund = try await client.send(.get, "/v1/accounts/zoe/entitlements", key: TestData.readerKey)
            let refunded = try afterRefund.json
            #expect(member(refunded, "entitledProductIds") as? [String] == [TestData.coins])
            #expect(product(refunded, "nonConsumables", TestData.pro)?["isEntitled"] as? Bool == false)
            let transactions = product(refunded, "nonConsumables", TestData.pro)?["transactions"] as? [[String: Any]]
            #expect(transactions?.first?["isRevoked"] as? Bool == true)

            // The same notification again changes nothing.
            let second = try await client.send(.post, "/v1/notifications/apple", body: try TestData.json(["signedPayload": refund]))
            #expect(second.status == .ok)
            #expect(try second.json["isDuplicate"] as? Bool == true)
            let afterDuplicate = try await client.send(.get, "/v1/accounts/zoe/entitlements", key: TestData.readerKey)
            var a = try afterRefund.json
            var b = try afterDuplicate.json
            a["asOf"] = nil
            b["asOf"] = nil
            #expect(NSDictionary(dictionary: a) == NSDictionary(dictionary: b))

            // /verifyReceipt answers Apple's real receipt with Apple's in-app entries.
            if let der = Fixtures.bytes("receipts/revenuecat-ios-sandbox-2020-sha1-9iap.der"),
               let apple = Fixtures.bytes("verifyreceipt/revenuecat-verifyreceipt-sandbox-2020.json") {
                let response = try await client.send(.post, "/verifyReceipt", key: TestData.fullKey, body: try TestData.json(["receipt-data": Base64.encode(der)]))
                try LegacyVerifyReceiptTests.expectSameInApp(response, appleReply: apple)
            } else {
                print("LiveStoryTests: \(Fixtures.missingMessage)")
            }
        }
        // The application closed the ledger when it shut down.
        await #expect(throws: LedgerError(.closed, reason: "")) {
            _ = try await ledger.entitlements(for: try AccountID("zoe"), at: Date())
        }
    }

    @Test("on graceful shutdown the request in flight completes, and only then the ledger closes")
    func gracefulShutdown() async throws {
        let configuration = try TestData.configuration()
        let slow = SlowLedger(base: InMemoryLedger(configuration: LedgerConfiguration(catalog: configuration.catalog)), delay: .milliseconds(600))
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "storegate.tests")
        logger.logLevel = .critical
        let app = buildApplication(configuration: configuration, ledger: slow, logger: logger) { channel in
            portContinuation.yield(channel.localAddress?.port ?? 0)
        }
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())

        let body = String(buffer: try TestData.verifyBody(try TestData.receipt(transactionPrefix: "72000000"), account: "yan"))
        let request = "POST /v1/receipts/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(TestData.fullKey)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        let inFlight = Task { try await RawHTTP.onThread { try RawHTTP.exchange(port: port, request: request) } }
        try await slow.waitUntilRecording()
        await group.triggerGracefulShutdown()
        let reply = try await inFlight.value
        #expect(reply.hasPrefix("HTTP/1.1 200"), "\(reply.prefix(120))")
        try await running.value
        #expect(slow.events == ["record-start", "record-end", "close"])
    }
}

/// A ledger whose recordings take a while, logging the order of recordings and closing.
final class SlowLedger: Ledger {
    let base: InMemoryLedger
    let delay: Duration
    private let log = Mutex<[String]>([])

    init(base: InMemoryLedger, delay: Duration) {
        self.base = base
        self.delay = delay
    }

    var events: [String] { log.withLock { $0 } }
    var backend: String { base.backend }
    var configuration: LedgerConfiguration { base.configuration }

    /// Returns once a recording has started.
    func waitUntilRecording() async throws {
        for _ in 0..<500 {
            if events.contains("record-start") { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("no recording started")
    }

    func record(_ proof: VerifiedProof, for account: AccountID) async throws(LedgerError) -> RecordOutcome {
        log.withLock { $0.append("record-start") }
        do {
            try await Task.sleep(for: delay)
        } catch {
            throw LedgerError(.storage, reason: "cancelled")
        }
        let outcome = try await base.record(proof, for: account)
        log.withLock { $0.append("record-end") }
        return outcome
    }

    func apply(_ notification: VerifiedNotification) async throws(LedgerError) -> NotificationOutcome { try await base.apply(notification) }
    func entitlements(for account: AccountID, at date: Date) async throws(LedgerError) -> Entitlements { try await base.entitlements(for: account, at: date) }
    func balance(of productId: String, for account: AccountID) async throws(LedgerError) -> ConsumableBalance { try await base.balance(of: productId, for: account) }
    func consume(_ productId: String, quantity: Int, idempotencyKey: String, for account: AccountID, at date: Date) async throws(LedgerError) -> ConsumptionReceipt {
        try await base.consume(productId, quantity: quantity, idempotencyKey: idempotencyKey, for: account, at: date)
    }
    func events(after sequence: Int64, limit: Int) async throws(LedgerError) -> [LedgerEvent] {
        try await base.events(after: sequence, limit: limit)
    }
    func pruneEvents(recordedBefore cutoff: Date, limit: Int) async throws(LedgerError) -> EventPruning {
        try await base.pruneEvents(recordedBefore: cutoff, limit: limit)
    }

    func timeline(for account: AccountID, before sequence: Int64?, limit: Int) async throws(LedgerError) -> [LedgerEvent] {
        try await base.timeline(for: account, before: sequence, limit: limit)
    }
    func search(_ term: String, limit: Int) async throws(LedgerError) -> [RecordedTransaction] { try await base.search(term, limit: limit) }
    func activity(days: Int, endingAt date: Date) async throws(LedgerError) -> [DailyActivity] { try await base.activity(days: days, endingAt: date) }
    func transaction(_ transactionId: String, in environment: AppStoreEnvironment) async throws(LedgerError) -> RecordedTransaction? {
        try await base.transaction(transactionId, in: environment)
    }
    func storedProof(_ digest: ProofDigest) async throws(LedgerError) -> [UInt8]? { try await base.storedProof(digest) }
    func transactions(after cursor: TransactionCursor?, limit: Int) async throws(LedgerError) -> [RecordedTransaction] {
        try await base.transactions(after: cursor, limit: limit)
    }
    func fillMoneyFacts(_ money: MoneyFacts, of transactionId: String, in environment: AppStoreEnvironment) async throws(LedgerError) -> Bool {
        try await base.fillMoneyFacts(money, of: transactionId, in: environment)
    }
    func rollups(_ measures: Set<RollupMeasure>, environment: AppStoreEnvironment, from: Int64?, through: Int64) async throws(LedgerError) -> [Rollup] {
        try await base.rollups(measures, environment: environment, from: from, through: through)
    }
    func rebuildRollups() async throws(LedgerError) -> RollupRebuild { try await base.rebuildRollups() }
    func foldRollupChanges(limit: Int) async throws(LedgerError) -> Int { try await base.foldRollupChanges(limit: limit) }
    func analyticsDrillDown(_ point: AnalyticsPointQuery, limit: Int) async throws(LedgerError) -> AnalyticsDrillDown {
        try await base.analyticsDrillDown(point, limit: limit)
    }
    func emitElapsedTransitions(until date: Date, limit: Int) async throws(LedgerError) -> Int {
        try await base.emitElapsedTransitions(until: date, limit: limit)
    }
    func checkIntegrity() async throws(LedgerError) -> LedgerIntegrityReport { try await base.checkIntegrity() }

    func grant(_ request: GrantRequest) async throws(LedgerError) -> GrantOutcome { try await base.grant(request) }
    func revokeGrant(_ id: String, of account: AccountID, by actor: String, reason: String, at date: Date) async throws(LedgerError) -> EntitlementGrant {
        try await base.revokeGrant(id, of: account, by: actor, reason: reason, at: date)
    }
    func grants(for account: AccountID) async throws(LedgerError) -> [EntitlementGrant] { try await base.grants(for: account) }
    func webhookEndpoints() async throws(LedgerError) -> [StoredWebhookEndpoint] { try await base.webhookEndpoints() }
    func createWebhookEndpoint(_ endpoint: StoredWebhookEndpoint) async throws(LedgerError) -> Bool { try await base.createWebhookEndpoint(endpoint) }
    func updateWebhookEndpoint(_ endpoint: StoredWebhookEndpoint, expectedRevision: Int64) async throws(LedgerError) -> Bool {
        try await base.updateWebhookEndpoint(endpoint, expectedRevision: expectedRevision)
    }
    func deleteWebhookEndpoint(named name: String, states: [String]) async throws(LedgerError) -> Bool { try await base.deleteWebhookEndpoint(named: name, states: states) }
    func clearWebhookEndpointLeftovers(named name: String, states: [String]) async throws(LedgerError) {
        try await base.clearWebhookEndpointLeftovers(named: name, states: states)
    }
    func createAPIKey(_ key: StoredAPIKey) async throws(LedgerError) -> Bool { try await base.createAPIKey(key) }
    func apiKey(digest: [UInt8]) async throws(LedgerError) -> StoredAPIKey? { try await base.apiKey(digest: digest) }
    func apiKeys() async throws(LedgerError) -> [StoredAPIKey] { try await base.apiKeys() }
    func revokeAPIKey(named name: String, at date: Date) async throws(LedgerError) -> StoredAPIKey? { try await base.revokeAPIKey(named: name, at: date) }
    func recordAPIKeyUses(_ uses: [String: Date]) async throws(LedgerError) { try await base.recordAPIKeyUses(uses) }
    func transfer(_ request: TransferRequest) async throws(LedgerError) -> TransferOutcome { try await base.transfer(request) }
    func recordSupportAction(_ action: SupportAction) async throws(LedgerError) { try await base.recordSupportAction(action) }

    func entitlementSnapshots(for accounts: [AccountID]) async throws(LedgerError) -> [AccountID: EntitlementSnapshot] {
        try await base.entitlementSnapshots(for: accounts)
    }
    func accountsWithEntitlementsDue(at date: Date, limit: Int) async throws(LedgerError) -> [AccountID] {
        try await base.accountsWithEntitlementsDue(at: date, limit: limit)
    }
    func commitEntitlementChanges(_ batch: EntitlementChangeBatch, holder: String, now: Date, lease: Duration) async throws(LedgerError) -> Bool {
        try await base.commitEntitlementChanges(batch, holder: holder, now: now, lease: lease)
    }

    // Deliveries and leased states: the base's.
    func fanOut(endpoint: String, types: Set<String>?, limit: Int, now: Date) async throws(LedgerError) -> Int {
        try await base.fanOut(endpoint: endpoint, types: types, limit: limit, now: now)
    }
    func claim(endpoint: String, now: Date, limit: Int, lease: Duration, holder: String) async throws(LedgerError) -> [ClaimedDelivery] {
        try await base.claim(endpoint: endpoint, now: now, limit: limit, lease: lease, holder: holder)
    }
    func complete(endpoint: String, results: [(sequence: Int64, result: DeliveryResult)], holder: String, at date: Date) async throws(LedgerError) -> Set<Int64> {
        try await base.complete(endpoint: endpoint, results: results, holder: holder, at: date)
    }
    func deliveries(endpoint: String?, status: EventDelivery.Status?, after: Int64, limit: Int) async throws(LedgerError) -> [EventDelivery] {
        try await base.deliveries(endpoint: endpoint, status: status, after: after, limit: limit)
    }
    func redeliver(endpoint: String, sequence: Int64, at date: Date) async throws(LedgerError) -> Bool {
        try await base.redeliver(endpoint: endpoint, sequence: sequence, at: date)
    }
    func deliveryCounts(of statuses: Set<EventDelivery.Status>) async throws(LedgerError) -> [String: [EventDelivery.Status: Int]] {
        try await base.deliveryCounts(of: statuses)
    }
    func acquireLease(on name: String, holder: String, now: Date, lease: Duration) async throws(LedgerError) -> LeasedState? {
        try await base.acquireLease(on: name, holder: holder, now: now, lease: lease)
    }
    func saveLeasedState(_ name: String, value: String, holder: String, now: Date, lease: Duration) async throws(LedgerError) -> Bool {
        try await base.saveLeasedState(name, value: value, holder: holder, now: now, lease: lease)
    }
    func releaseLease(on name: String, holder: String) async throws(LedgerError) { try await base.releaseLease(on: name, holder: holder) }
    func leasedStates(prefix: String) async throws(LedgerError) -> [LeasedState] { try await base.leasedStates(prefix: prefix) }
    func removeLeasedState(_ name: String, holder: String) async throws(LedgerError) -> Bool {
        try await base.removeLeasedState(name, holder: holder)
    }
    func close() async {
        log.withLock { $0.append("close") }
        await base.close()
    }
}
