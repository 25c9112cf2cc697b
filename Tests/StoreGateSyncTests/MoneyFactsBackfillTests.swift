import Foundation
import Logging
import StoreGateCore
import StoreGateLedger
import StoreGateSignedData
import StoreGateTestSupport
import Testing

@testable import StoreGateSync

/// Issue 29 item 1: transactions recorded before the ledger kept money facts get them from the
/// proofs it stored — a signed transaction, or a notification's nested one — and what cannot be
/// filled stays unknown, counted by reason.
@Suite("Money facts backfill from stored proofs")
struct MoneyFactsBackfillTests {
    static var alice: AccountID {
        get throws { try AccountID("alice") }
    }

    /// A transaction as recorded before schema 14: no money facts.
    static func transaction(_ id: String, source: ProofKind = .signedTransaction) -> VerifiedTransaction {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        return VerifiedTransaction(
            environment: .sandbox, bundleId: "com.example.storegate", transactionId: id, originalTransactionId: id,
            productId: "com.example.storegate.monthly", productType: source == .appReceipt ? nil : .autoRenewable, quantity: 1,
            purchaseDate: date, originalPurchaseDate: date, expiresDate: date.addingTimeInterval(30 * 86_400), revocationDate: nil,
            revocationReason: nil, webOrderLineItemId: nil, subscriptionGroupIdentifier: nil, appAccountToken: nil, isUpgraded: false,
            signedDate: date, source: source, money: nil
        )
    }

    static func proof(_ transaction: VerifiedTransaction, raw: [UInt8], kind: ProofKind = .signedTransaction) -> VerifiedProof {
        VerifiedProof(kind: kind, environment: .sandbox, bundleId: "com.example.storegate", signedDate: transaction.signedDate, transactions: [transaction], rawProof: raw)
    }

    static func configuration() throws -> LedgerConfiguration {
        LedgerConfiguration(encryption: try ProofEncryption(specification: "k1=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="))
    }

    @Test("stored signed transactions and notifications fill the facts; receipts and foreign proofs stay unknown; a second run fills nothing")
    func backfill() async throws {
        let minter = try JWSMinter.shared()
        var payload = JWSPayloads.transaction(transactionId: "t1", originalTransactionId: "t1")
        payload["offerType"] = 1
        payload["offerDiscountType"] = "FREE_TRIAL"
        payload["price"] = 0
        let signedTransaction = try minter.mint(json: payload)
        var nestedPayload = JWSPayloads.transaction(transactionId: "t2", originalTransactionId: "t2")
        nestedPayload["currency"] = "EUR"
        nestedPayload["price"] = 10_990
        nestedPayload["storefront"] = "DEU"
        let notification = try minter.mint(json: JWSPayloads.notification(signedTransactionInfo: try minter.mint(json: nestedPayload)))

        let ledger = InMemoryLedger(configuration: try Self.configuration())
        try await ledger.record(Self.proof(Self.transaction("t1"), raw: Array(signedTransaction.utf8)), for: Self.alice)
        try await ledger.apply(VerifiedNotification(
            notificationUUID: "n-1", notificationType: "DID_RENEW", subtype: nil, signedDate: Date(timeIntervalSince1970: 1_700_000_100),
            environment: .sandbox, bundleId: "com.example.storegate", transaction: Self.transaction("t2"), renewalInfo: nil,
            rawProof: Array(notification.utf8)
        ))
        try await ledger.record(Self.proof(Self.transaction("r1", source: .appReceipt), raw: Array("a receipt".utf8), kind: .appReceipt), for: Self.alice)
        // A row whose stored proof is another transaction's.
        try await ledger.record(Self.proof(Self.transaction("t3"), raw: Array(signedTransaction.utf8)), for: Self.alice)

        let report = try await MoneyFactsBackfill(ledger: ledger, logger: Logger(label: "test")).run(pageSize: 2)
        #expect(report.scanned == 4)
        #expect(report.filled == 2)
        #expect(report.receiptOnly == 1)
        #expect(report.notInProof == 1)
        #expect(report.proofNotStored == 0)
        let t1 = try await ledger.transaction("t1", in: .sandbox)
        #expect(t1?.money == MoneyFacts(price: 0, currency: "USD", storefront: "USA", offerType: 1, offerDiscountType: "FREE_TRIAL", transactionReason: "PURCHASE"))
        #expect(t1?.periodType == .trial)
        #expect(try await ledger.transaction("t2", in: .sandbox)?.money?.price == 10_990)
        #expect(try await ledger.transaction("t3", in: .sandbox)?.money == nil)
        #expect(try await ledger.transaction("r1", in: .sandbox)?.money == nil)

        let again = try await MoneyFactsBackfill(ledger: ledger, logger: Logger(label: "test")).run()
        #expect(again.filled == 0 && again.alreadyKnown == 2)
        let rollups = try await ledger.rollups([.revenue, .unpriced], environment: .sandbox, from: nil, through: 100_000)
        #expect(rollups.filter { $0.key.measure == .revenue }.map(\.value.amount) == [10_990])
        #expect(rollups.filter { $0.key.measure == .unpriced }.map(\.value.count).reduce(0, +) == 2)
    }

    @Test("without stored proofs (no encryption key when recorded) the facts stay unknown, counted as such")
    func notStored() async throws {
        let ledger = InMemoryLedger()
        try await ledger.record(Self.proof(Self.transaction("t1"), raw: Array("anything".utf8)), for: Self.alice)
        let report = try await MoneyFactsBackfill(ledger: ledger, logger: Logger(label: "test")).run()
        #expect(report.proofNotStored == 1 && report.filled == 0)
    }

    @Test("bytes that are not a signed transaction or notification give no facts", arguments: ["", "not a jws", "a.b.c"])
    func garbage(raw: String) {
        #expect(MoneyFactsBackfill.moneyFacts(of: "t1", in: Array(raw.utf8)) == nil)
    }
}
