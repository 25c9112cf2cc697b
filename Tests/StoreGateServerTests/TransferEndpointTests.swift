import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import StoreGateCore
import StoreGateLedger
import StoreGateTestSupport
import Testing

@testable import StoreGateServer

/// Transfers through the API (issue 28 item 4): the policy a restore by another account meets,
/// and support's move by hand.
@Suite("Transfers")
struct TransferEndpointTests {
    static let supportKey = "support-key-0123456789abcdef"
    static let grantsOnlyKey = "grants-key-0123456789abcdef"
    static let verify = "/v1/receipts/verify"

    static func configuration() throws -> ServerConfiguration {
        var configuration = try TestData.configuration()
        var keys = configuration.apiKeys
        try keys.add(name: "support", secret: supportKey, permissions: [.transfersManage, .entitlementsRead])
        try keys.add(name: "granter", secret: grantsOnlyKey, permissions: [.grantsManage])
        configuration.apiKeys = keys
        return configuration
    }

    static func events(_ ledger: any Ledger, of account: String) async throws -> [LedgerEvent] {
        try await ledger.events(after: 0, limit: 1000).filter { $0.account.rawValue == account }
    }

    @Test("STOREGATE_TRANSFER_POLICY=transfer reaches the ledger: a receipt another account presents moves its purchases, the reply names them, the old account loses them")
    func restoreUnderTransferPolicy() async throws {
        var configuration = try Self.configuration()
        configuration.database = .sqlite(path: try TemporaryFiles.directory("transfers").appendingPathComponent("ledger.sqlite").path)
        configuration.transferPolicy = .transfer
        var logger = Logger(label: "storegate.tests")
        logger.logLevel = .critical
        let opened = try LedgerOpener.open(configuration, logger: logger)
        #expect(opened.ledger.configuration.transferPolicy == .transfer)
        let app = TestData.application(configuration, opened: opened)
        let receipt = try TestData.receipt(transactionPrefix: "13000000")
        try await app.testRouter { client in
            let first = try await client.send(.post, Self.verify, key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "ann"))
            #expect(first.status == .ok)
            #expect(member(try first.json, "recorded", "transferredOriginalTransactionIds") as? [String] == [])
            let moved = try await client.send(.post, Self.verify, key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "ben"))
            #expect(moved.status == .ok)
            let recorded = member(try moved.json, "recorded")
            #expect(member(recorded, "transferredOriginalTransactionIds") as? [String] == ["1300000000000001", "1300000000000002"])
            #expect(member(recorded, "isDuplicate") as? Bool == false)
            #expect(member(try moved.json, "entitlements", "entitledProductIds") as? [String] == [TestData.coins, TestData.pro])
            let ann = try await client.send(.get, "/v1/accounts/ann/entitlements", key: TestData.fullKey)
            #expect(member(try ann.json, "entitledProductIds") as? [String] == [])

            let anns = try await Self.events(opened.ledger, of: "ann")
            #expect(anns.map(\.type) == [.consumableCredited, .purchaseRecorded, .purchaseTransferred, .purchaseTransferred])
            #expect(anns.suffix(2).allSatisfy { $0.transfer?.direction == .outgoing && $0.transfer?.to.rawValue == "ben" && $0.entitlement?.isEntitled == false })
            let bens = try await Self.events(opened.ledger, of: "ben")
            #expect(bens.map(\.type) == [.purchaseTransferred, .purchaseTransferred])
            #expect(bens.allSatisfy { $0.transfer?.direction == .incoming && $0.entitlement?.isEntitled == true })
        }
        await opened.ledger.close()
    }

    @Test("under the default policy the same restore is still 409 owned_by_another_account")
    func restoreUnderRefusePolicy() async throws {
        let (app, ledger) = TestData.application(try Self.configuration())
        #expect(ledger.configuration.transferPolicy == .refuse)
        let receipt = try TestData.receipt(transactionPrefix: "13500000")
        try await app.testRouter { client in
            try await client.send(.post, Self.verify, key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "ann"))
            let refused = try await client.send(.post, Self.verify, key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "ben"))
            #expect(refused.status == .conflict)
            #expect(refused.code == "owned_by_another_account")
            #expect(try await Self.events(ledger, of: "ben").map(\.type) == [.proofRefused])
        }
    }

    @Test("support moves a purchase by hand: 201, then 200 for the same move; audited on both accounts; the old account loses it")
    func manualMove() async throws {
        let (app, ledger) = TestData.application(try Self.configuration())
        let receipt = try TestData.receipt(transactionPrefix: "14000000")
        try await app.testRouter { client in
            try await client.send(.post, Self.verify, key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "ann"))
            let body = try TestData.json(["environment": "test", "originalTransactionId": "1400000000000002", "reason": "ticket 9: new login"])
            let moved = try await client.send(.post, "/v1/accounts/ben/transfers", key: Self.supportKey, body: body)
            #expect(moved.status == .created)
            let json = try moved.json
            #expect(json["from"] as? String == "ann" && json["to"] as? String == "ben" && json["isMoved"] as? Bool == true)
            #expect(json["environment"] as? String == "Test" && json["originalTransactionId"] as? String == "1400000000000002")
            #expect(json["transactionIds"] as? [String] == ["1400000000000002"])
            let transferId = try #require(json["transferId"] as? String)
            let again = try await client.send(.post, "/v1/accounts/ben/transfers", key: Self.supportKey, body: body)
            #expect(again.status == .ok)
            #expect(try again.json["isMoved"] as? Bool == false && (try again.json["transferId"]) == nil)

            let ben = try await client.send(.get, "/v1/accounts/ben/entitlements", key: Self.supportKey)
            #expect(member(try ben.json, "entitledProductIds") as? [String] == [TestData.pro])
            let ann = try await client.send(.get, "/v1/accounts/ann/entitlements", key: Self.supportKey)
            #expect(member(try ann.json, "entitledProductIds") as? [String] == [TestData.coins])

            let out = try #require(try await Self.events(ledger, of: "ann").last)
            let into = try #require(try await Self.events(ledger, of: "ben").last)
            for event in [out, into] {
                #expect(event.type == .purchaseTransferred && event.source == "transfer")
                #expect(event.transfer?.id == transferId && event.transfer?.actor == "support" && event.transfer?.reason == "ticket 9: new login")
            }
            #expect(out.transfer?.direction == .outgoing && into.transfer?.direction == .incoming)

            // The event on the wire (the stream and webhooks' body).
            let page = try await client.send(.get, "/v1/events", key: TestData.fullKey)
            let wire = try #require((try page.json["events"] as? [[String: Any]])?.last)
            #expect(wire["type"] as? String == "purchase.transferred")
            #expect(member(wire, "transfer", "direction") as? String == "in")
            #expect(member(wire, "transfer", "from") as? String == "ann")
            #expect(member(wire, "transfer", "actor") as? String == "support")
        }
    }

    /// Request bodies (JSON text) and the status and code each must get.
    static let refused: [(String, Int, String)] = [
        (#"{"environment": "Test", "originalTransactionId": "nope", "reason": "r"}"#, 404, "purchase_not_found"),
        (#"{"environment": "Production", "originalTransactionId": "1500000000000002", "reason": "r"}"#, 404, "purchase_not_found"),
        (#"{"environment": "Test", "originalTransactionId": "1500000000000002"}"#, 400, "missing_field"),
        (#"{"environment": "Staging", "originalTransactionId": "1500000000000002", "reason": "r"}"#, 400, "invalid_field"),
        (#"{"environment": "Test", "originalTransactionId": "1500000000000002", "reason": ""}"#, 400, "invalid_argument"),
        (#"{"environment": "Test", "originalTransactionId": "1500000000000002", "reason": "r", "account": "x"}"#, 400, "unknown_field"),
        (#"{"environment": "Test", "originalTransactionId": 15, "reason": "r"}"#, 400, "invalid_field"),
    ]

    @Test("a bad move names the member; an unknown purchase is 404 purchase_not_found; nothing moves", arguments: refused)
    func refusals(_ body: String, _ status: Int, _ code: String) async throws {
        let (app, ledger) = TestData.application(try Self.configuration())
        let receipt = try TestData.receipt(transactionPrefix: "15000000")
        try await app.testRouter { client in
            try await client.send(.post, Self.verify, key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "ann"))
            let reply = try await client.send(.post, "/v1/accounts/ben/transfers", key: Self.supportKey, body: ByteBuffer(string: body))
            #expect(reply.status.code == status)
            #expect(reply.code == code)
            #expect(try await ledger.transaction("1500000000000002", in: .test)?.account?.rawValue == "ann")
        }
    }

    @Test("moving needs transfers.manage (grants.manage is not enough); a token-bound purchase never moves to another token: 409")
    func permissionsAndTokens() async throws {
        let (app, ledger) = TestData.application(try Self.configuration())
        let owner = "6F9619FF-8B86-D011-B42D-00CF4FC964FF"
        var payload = JWSPayloads.transaction(transactionId: "1600000000000001", originalTransactionId: "1600000000000001", productId: TestData.pro, type: "Non-Consumable")
        payload["appAccountToken"] = owner
        let signed = try TestData.jwsMinter.mint(json: payload)
        try await app.testRouter { client in
            let recorded = try await client.send(.post, "/v1/transactions/verify", key: TestData.fullKey, body: try TestData.json(["signedTransaction": signed, "account": owner]))
            #expect(recorded.status == .ok)
            let body = try TestData.json(["environment": "Test", "originalTransactionId": "1600000000000001", "reason": "r"])
            for key in [TestData.readerKey, Self.grantsOnlyKey] {
                #expect(try await client.send(.post, "/v1/accounts/ben/transfers", key: key, body: body).status == .forbidden)
            }
            let refused = try await client.send(.post, "/v1/accounts/ben/transfers", key: Self.supportKey, body: body)
            #expect(refused.status == .conflict)
            #expect(refused.code == "app_account_token_mismatch")
            #expect(try await ledger.transaction("1600000000000001", in: .test)?.account?.rawValue == owner)
            #expect(try await Self.events(ledger, of: "ben").isEmpty)
        }
    }
}
