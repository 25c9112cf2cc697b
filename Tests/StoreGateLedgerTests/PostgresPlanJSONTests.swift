import Foundation
import StoreGateCore
@testable import StoreGateLedger
@testable import StoreGateLedgerPostgres
import Testing

/// The document `ledger_apply_v6` takes (and the events it takes beside it), written by Core's JSON writer: read back with Core's
/// strict reader, every value has the type the SQL casts it to, and absent values are `null`.
@Suite("PostgreSQL plan document")
struct PostgresPlanJSONTests {
    static let digest = ProofDigest(of: Array("proof".utf8))

    /// A transaction with every optional member absent, and a product id that needs escaping.
    static func bareTransaction(_ id: String) -> TransactionRow {
        TransactionRow(
            value: RecordedTransaction(
                environment: .sandbox, transactionId: id, originalTransactionId: "o-\(id)", account: nil,
                bundleId: "com.example.app", productId: "coins \"gold\"\n\u{1}", productType: .consumable,
                subscriptionGroup: "", quantity: 3, purchaseDate: Purchases.t0, originalPurchaseDate: nil,
                expiresDate: nil, revocationDate: nil, revocationReason: nil, isUpgraded: false,
                webOrderLineItemId: nil, appAccountToken: nil, observedAt: Purchases.t0, source: .appReceipt, proofDigest: nil),
            hasAppleMetadata: false)
    }

    /// A plan that touches every list, with absent values wherever the model allows them.
    static func fullPlan() -> LedgerWritePlan {
        var plan = LedgerWritePlan(
            proof: ProofRow(digest: digest, kind: .appReceipt, environment: .sandbox, sealed: nil, receivedAt: Purchases.t0),
            notification: NotificationRow(
                summary: RecordedNotification(
                    notificationUUID: "n-1", notificationType: "TEST", subtype: nil, signedDate: Purchases.t0,
                    environment: .sandbox, transactionId: nil, originalTransactionId: nil),
                proofDigest: digest))
        let family = FamilyKey(environment: .sandbox, originalTransactionId: "o-1")
        plan.familyInserts = [FamilyRow(key: family, account: nil)]
        plan.familyClaims = [FamilyRow(key: family, account: Purchases.account("alice"))]
        plan.nextTransitions = [
            NextTransition(key: family, at: Purchases.t0), NextTransition(key: FamilyKey(environment: .sandbox, originalTransactionId: "o-2"), at: nil),
        ]
        plan.transactionInserts = [bareTransaction("1")]
        plan.transactionUpdates = [bareTransaction("2")]
        plan.renewals = [RenewalRow(
            key: family, productId: "pro.monthly", autoRenewProductId: nil, willAutoRenew: true, expirationIntent: nil,
            isInBillingRetryPeriod: false, gracePeriodExpiresDate: nil, renewalDate: nil, observedAt: Purchases.t0)]
        plan.balanceDeltas = [BalanceDelta(key: BalanceKey(account: Purchases.account("alice"), productId: "coins"), purchased: 3, refunded: 0)]
        plan.transfers = [TransferRow(
            id: "t-1", key: FamilyKey(environment: .sandbox, originalTransactionId: "o-3"), from: Purchases.account("bob"),
            to: Purchases.account("alice"), transferredAt: Purchases.t0, source: "app_receipt", actor: nil, reason: nil,
            consumableProductId: nil, consumableUnits: 0)]
        plan.rollupDeltas = [Rollup(
            key: RollupKey(
                day: 19_675, measure: .revenue, environment: .sandbox, productId: "pro.monthly", subscriptionGroup: "pro",
                storefront: "USA", currency: "USD", offer: "none"),
            value: RollupValue(count: 1, amount: 9_990))]
        plan.events = [LedgerEvent(
            id: "e-1", sequence: 0, type: .consumableCredited, account: Purchases.account("alice"), productId: "coins",
            environment: .sandbox, transactionId: "1", originalTransactionId: "o-1", occurredAt: Purchases.t0,
            recordedAt: Purchases.t0, source: "signed_transaction", quantity: 3,
            entitlement: LedgerEvent.Entitlement(productType: .consumable, isEntitled: false))]
        return plan
    }

    static func read(_ text: String) throws -> JSONObject {
        try JSONReader.readObject(Array(text.utf8)).get()
    }

    static func objects(_ document: JSONObject, _ name: String) throws -> [JSONObject] {
        guard case .array(let elements) = try #require(document[name]) else {
            Issue.record("\(name) is not an array")
            return []
        }
        return elements.compactMap { if case .object(let object) = $0 { object } else { nil } }
    }

    @Test("absent values are written as null, dates as integer milliseconds, bytes as hexadecimal")
    func types() throws {
        let key = TransactionKey(environment: .sandbox, transactionId: "2")
        let document = try Self.read(PostgresPlanJSON.encode(Self.fullPlan(), revisions: [key: 7], familyRevisions: [:], unownedFamilies: [], now: 1_700_000_000_123))
        #expect(document["now"] == .integer(1_700_000_000_123))

        guard case .object(let proof) = try #require(document["proof"]) else { throw Failure("proof is not an object") }
        #expect(proof["digest"] == .string(Hex.encode(Self.digest.bytes)))
        #expect(proof["key_id"] == .null)
        #expect(proof["sealed"] == nil, "the sealed proof goes as a parameter of its own")
        #expect(proof["received_at"] == .integer(1_700_000_000_000))

        guard case .object(let notification) = try #require(document["notification"]) else { throw Failure("notification is not an object") }
        #expect(notification["subtype"] == .null)
        #expect(notification["transaction_id"] == .null)
        #expect(notification["original_transaction_id"] == .null)

        let inserted = try #require(try Self.objects(document, "transaction_inserts").first)
        for name in ["account_id", "original_purchase_date", "expires_date", "revocation_date", "revocation_reason",
                     "web_order_line_item_id", "app_account_token", "proof_digest"] {
            #expect(inserted[name] == .null, "\(name)")
        }
        #expect(inserted["product_id"] == .string("coins \"gold\"\n\u{1}"))
        #expect(inserted["quantity"] == .integer(3))
        #expect(inserted["has_apple_metadata"] == .bool(false))
        #expect(inserted["purchase_date"] == .integer(1_700_000_000_000))
        #expect(inserted["revision"] == nil)
        #expect(try Self.objects(document, "transaction_updates").first?["revision"] == .integer(7))

        let renewal = try #require(try Self.objects(document, "renewals").first)
        for name in ["auto_renew_product_id", "expiration_intent", "grace_period_expires_date", "renewal_date"] {
            #expect(renewal[name] == .null, "\(name)")
        }
        #expect(renewal["will_auto_renew"] == .bool(true))
        #expect(try Self.objects(document, "family_inserts").first?["account_id"] == .null)
        #expect(try Self.objects(document, "family_inserts").first?["next_transition_at"] == .null)
        #expect(try Self.objects(document, "next_transitions").map { $0["at"] } == [.integer(1_700_000_000_000), .null])
        #expect(try Self.objects(document, "family_claims").first?["account_id"] == .string("alice"))
        #expect(try Self.objects(document, "balance_deltas").first?["purchased"] == .integer(3))
        let transfer = try #require(try Self.objects(document, "transfers").first)
        for name in ["actor", "reason", "product_id"] {
            #expect(transfer[name] == .null, "\(name)")
        }
        #expect(transfer["from_account"] == .string("bob") && transfer["to_account"] == .string("alice"))
        #expect(transfer["transferred_at"] == .integer(1_700_000_000_000) && transfer["units"] == .integer(0) && transfer["refunded_units"] == .integer(0))
        #expect(document["event_account"] == .string("alice"), "the events' one account, locked with an expression")
    }

    @Test("a plan without a proof, a notification or a list leaves them out (the function tests them before running a statement)")
    func leftOut() throws {
        let document = try Self.read(PostgresPlanJSON.encode(LedgerWritePlan(), revisions: [:], familyRevisions: [:], unownedFamilies: [], now: 0))
        #expect(document["proof"] == nil)
        #expect(document["notification"] == nil)
        #expect(document.members.map(\.key) == ["now"], "an empty list is left out: the function skips its loop")
    }

    @Test("every member ledger_apply_v6 (and v5, whose reads it repeats) reads is written, in the document or in an event")
    func everyMemberTheFunctionReads() throws {
        let sql = PostgresFunctions.applyWithMoney
        #expect(sql.contains("ledger_apply_v6("))
        let plan = Self.fullPlan()
        let document = try Self.read(PostgresPlanJSON.encode(
            plan, revisions: [:], familyRevisions: [FamilyKey(environment: .sandbox, originalTransactionId: "o-1"): 4],
            unownedFamilies: [FamilyKey(environment: .sandbox, originalTransactionId: "o-9")], now: 0))
        var written: Set<String> = []
        func collect(_ value: JSONValue) {
            switch value {
            case .object(let object):
                for member in object.members {
                    written.insert(member.key)
                    collect(member.value)
                }
            case .array(let elements): elements.forEach(collect)
            default: break
            }
        }
        collect(.object(document))
        for event in plan.events { collect(.object(try JSONReader.readObject(event.storedJSON).get())) }
        let read = Self.names(in: sql, after: "->>'").union(Self.names(in: sql, after: "plan->'")).union(Self.names(in: sql, after: "plan ? '"))
        #expect(read.count > 40)
        #expect(read.subtracting(written).isEmpty, "read but not written: \(read.subtracting(written).sorted())")
    }

    @Test("an event goes beside the document: a consumable's without the end the function appends, the rest whole")
    func eventParameters() throws {
        var credited = try #require(Self.fullPlan().events.first)
        var consumed = credited
        consumed.type = .consumableConsumed
        consumed.entitlement?.balance = ConsumableBalance(productId: "coins", purchased: 3, refunded: 0, consumed: 1)
        let other = LedgerEvent(
            id: "e-2", sequence: 0, type: .purchaseRecorded, account: Purchases.account("bob"), productId: "pro \"lifetime\"",
            environment: .sandbox, transactionId: "2", originalTransactionId: "2", occurredAt: Purchases.t0, recordedAt: Purchases.t0,
            source: "signed_transaction", entitlement: LedgerEvent.Entitlement(productType: .nonConsumable, isEntitled: true))
        let parameters = PostgresPlanJSON.eventParameters([credited, consumed, other])
        guard parameters.count == 4, case .texts(let payloads) = parameters[0], case .texts(let accounts) = parameters[1],
              case .texts(let products) = parameters[2], case .bools(let balanced) = parameters[3] else {
            throw Failure("not four arrays: \(parameters)")
        }
        #expect(accounts == ["alice", "alice", "bob"])
        #expect(products == ["coins", "coins", "pro \"lifetime\""])
        #expect(balanced == [true, false, false], "only a consumable's credit or refund states the balance the store keeps")
        #expect(payloads[1] == String(decoding: consumed.storedJSON, as: UTF8.self))
        #expect(payloads[2] == String(decoding: other.storedJSON, as: UTF8.self))
        if case .success = JSONReader.readObject(Array(payloads[0].utf8)) { Issue.record("a credit's payload is left open for the function") }

        // What the function appends (PostgresEvents.appendFromArrays), with the counters stored:
        // the event reads back as the one the other backends store.
        let completed = payloads[0] + #","isEntitled":true,"balance":{"purchased":3,"refunded":0,"consumed":1}}}"#
        credited.entitlement?.balance = ConsumableBalance(productId: "coins", purchased: 3, refunded: 0, consumed: 1)
        credited.entitlement?.isEntitled = true
        #expect(try LedgerEvent(stored: Array(completed.utf8), sequence: 0) == credited)
        #expect(PostgresEvents.appendFromArrays.contains(#"',"isEntitled":' || (balance.purchased > balance.consumed)::text"#))
        #expect(PostgresPlanJSON.eventParameters([]).allSatisfy { if case .null = $0 { true } else { false } })
    }

    /// The quoted names following `prefix` in `text` (`r->>'name'`).
    static func names(in text: String, after prefix: String) -> Set<String> {
        var names: Set<String> = []
        var rest = text[...]
        while let start = rest.range(of: prefix) {
            rest = rest[start.upperBound...]
            guard let end = rest.firstIndex(of: "'") else { break }
            names.insert(String(rest[..<end]))
            rest = rest[rest.index(after: end)...]
        }
        return names
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
