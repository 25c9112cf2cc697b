import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StoreGateCore
import StoreGateLedger
import Testing

@testable import StoreGateServer

/// Grants by hand through the API (issue 28 item 3).
@Suite("Grants")
struct GrantEndpointTests {
    static let supportKey = "support-key-0123456789abcdef"

    static func configuration() throws -> ServerConfiguration {
        var configuration = try TestData.entitlementsConfiguration()
        var keys = configuration.apiKeys
        try keys.add(name: "support", secret: supportKey, permissions: [.grantsManage, .entitlementsRead])
        configuration.apiKeys = keys
        return configuration
    }

    @Test("support grants an entitlement for a week: the account is entitled with the grant as its source; a retry replays; a revocation ends it; every step is evented")
    func grantAndRevoke() async throws {
        let (app, ledger) = TestData.application(try Self.configuration())
        try await app.testRouter { client in
            let body = try TestData.json(["entitlement": "premium", "duration": "P7D", "reason": "ticket 4711: app crashed at checkout", "idempotencyKey": "ticket-4711"])
            let created = try await client.send(.post, "/v1/accounts/gina/grants", key: Self.supportKey, body: body)
            #expect(created.status == .created)
            let grant = try #require(try created.json["grant"] as? [String: Any])
            let id = try #require(grant["id"] as? String)
            #expect(grant["grantedBy"] as? String == "support")
            #expect(grant["isActive"] as? Bool == true)
            #expect(try created.json["isReplay"] as? Bool == false)
            let retried = try await client.send(.post, "/v1/accounts/gina/grants", key: Self.supportKey, body: body)
            #expect(retried.status == .ok)
            #expect(member(try retried.json, "grant", "id") as? String == id)
            #expect(try retried.json["isReplay"] as? Bool == true)

            let premium = try await client.send(.get, "/v1/accounts/gina/entitlements/premium", key: Self.supportKey)
            #expect(member(try premium.json, "entitlement", "isActive") as? Bool == true)
            #expect(member(try premium.json, "entitlement", "source", "kind") as? String == "grant")
            #expect(member(try premium.json, "entitlement", "source", "grantId") as? String == id)

            let listed = try await client.send(.get, "/v1/accounts/gina/grants", key: Self.supportKey)
            #expect((try listed.json["grants"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [id])

            let revoked = try await client.send(.post, "/v1/accounts/gina/grants/\(id)/revoke", key: Self.supportKey, body: try TestData.json(["reason": "resolved"]))
            #expect(revoked.status == .ok)
            #expect(try revoked.json["revokedBy"] as? String == "support")
            #expect(try revoked.json["isActive"] as? Bool == false)
            let after = try await client.send(.get, "/v1/accounts/gina/entitlements/premium", key: Self.supportKey)
            #expect(member(try after.json, "entitlement", "isActive") as? Bool == false)

            let events = try await ledger.events(after: 0, limit: 100).filter { $0.account.rawValue == "gina" && $0.type != .entitlementChanged }
            #expect(events.map(\.type) == [.grantCreated, .grantRevoked])
            #expect(events.first?.grant?.actor == "support" && events.last?.grant?.reason == "resolved")
        }
    }

    /// Request bodies (JSON text) and the status and code each must get.
    static let refused: [(String, Int, String)] = [
        (#"{"entitlement": "premium", "reason": "r", "idempotencyKey": "k"}"#, 400, "missing_field"),
        (#"{"entitlement": "premium", "duration": "P1M", "reason": "r", "idempotencyKey": "k"}"#, 400, "invalid_field"),
        (#"{"entitlement": "premium", "duration": "P1D", "until": "2030-01-01T00:00:00Z", "reason": "r", "idempotencyKey": "k"}"#, 400, "invalid_field"),
        (#"{"entitlement": "premium", "until": "yesterday", "reason": "r", "idempotencyKey": "k"}"#, 400, "invalid_field"),
        (#"{"entitlement": "premium", "until": "2001-01-01T00:00:00Z", "reason": "r", "idempotencyKey": "k"}"#, 400, "invalid_argument"),
        (#"{"entitlement": "nothing", "duration": "P1D", "reason": "r", "idempotencyKey": "k"}"#, 422, "unknown_entitlement"),
        (#"{"entitlement": "premium", "duration": "P1D", "reason": "r", "idempotencyKey": "k", "extra": 1}"#, 400, "unknown_field"),
    ]

    @Test("a bad grant request names the member; an unknown entitlement is refused", arguments: refused)
    func refusals(_ body: String, _ status: Int, _ code: String) async throws {
        let (app, _) = TestData.application(try Self.configuration())
        try await app.testRouter { client in
            let reply = try await client.send(.post, "/v1/accounts/hal/grants", key: Self.supportKey, body: ByteBuffer(string: body))
            #expect(reply.status.code == status)
            #expect(reply.code == code)
        }
    }

    @Test("a key without grants.manage is refused; revoking an unknown grant is 404")
    func permissions() async throws {
        let (app, _) = TestData.application(try Self.configuration())
        try await app.testRouter { client in
            let body = try TestData.json(["entitlement": "premium", "duration": "PT1H", "reason": "r", "idempotencyKey": "k"])
            let forbidden = try await client.send(.post, "/v1/accounts/ida/grants", key: TestData.readerKey, body: body)
            #expect(forbidden.status == .forbidden)
            let missing = try await client.send(.post, "/v1/accounts/ida/grants/nope/revoke", key: Self.supportKey, body: try TestData.json(["reason": "r"]))
            #expect(missing.status == .notFound)
            #expect(missing.code == "grant_not_found")
        }
    }

    @Test("ISO 8601 durations: weeks, days and time parts; years and months are refused")
    func durations() {
        #expect(ISODuration.seconds("P7D") == 604_800)
        #expect(ISODuration.seconds("P2W") == 1_209_600)
        #expect(ISODuration.seconds("PT12H") == 43_200)
        #expect(ISODuration.seconds("P1DT2H30M5S") == 95_405)
        for bad in ["P1M", "P1Y", "P", "PT", "7D", "P1H", "PT1D", "P-1D", "P1.5D", ""] {
            #expect(ISODuration.seconds(bad) == nil, "\(bad)")
        }
    }
}
