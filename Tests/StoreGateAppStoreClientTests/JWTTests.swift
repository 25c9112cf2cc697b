import Crypto
import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateHTTP
import StoreGateTestSupport
import Testing

@Suite("App Store Server API tokens")
struct JWTTests {
    static func decode(_ part: Substring) throws -> [String: Any] {
        let bytes = try #require(Base64.decode(part, mode: .url))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test("a token carries Apple's header and claims and an ES256 signature")
    func claims() throws {
        let (credentials, _) = AppleStandIn.ServerAPIAccount.makeTestPair(bundleId: "com.example.app", keyId: "KEY123", issuerId: "issuer-1")
        let issued = Date(timeIntervalSince1970: 1_700_000_000)
        let token = try AppStoreServerAPIToken(credentials: credentials, issuedAt: issued, lifetime: .seconds(1200))
        let parts = token.compact.split(separator: ".")
        #expect(parts.count == 3)
        let header = try Self.decode(parts[0])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == "KEY123")
        #expect(header["typ"] as? String == "JWT")
        let claims = try Self.decode(parts[1])
        #expect(claims["iss"] as? String == "issuer-1")
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(claims["bid"] as? String == "com.example.app")
        #expect((claims["iat"] as? NSNumber)?.int64Value == 1_700_000_000)
        #expect((claims["exp"] as? NSNumber)?.int64Value == 1_700_001_200)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64.decode(parts[2], mode: .url)))
        #expect(credentials.privateKey.publicKey.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)))
    }

    @Test("a lifetime over 60 minutes is clamped to 60")
    func lifetimeClamp() throws {
        let (credentials, _) = AppleStandIn.ServerAPIAccount.makeTestPair()
        let token = try AppStoreServerAPIToken(credentials: credentials, issuedAt: Date(timeIntervalSince1970: 1_700_000_000), lifetime: .seconds(7200))
        #expect(token.expiresAt.timeIntervalSince(token.issuedAt) == 3600)
    }

    @Test("the provider reuses its token and signs a new one before expiry")
    func caching() async throws {
        let (credentials, _) = AppleStandIn.ServerAPIAccount.makeTestPair()
        let clock = TestClock(Date(timeIntervalSince1970: 1_700_000_000))
        let provider = AppStoreServerAPITokenProvider(credentials: credentials, lifetime: .seconds(600), renewalMargin: .seconds(60), now: { clock.now })
        let first = try await provider.token()
        clock.advance(by: 300)
        #expect(try await provider.token() == first)
        clock.advance(by: 239)  // 539 s: 61 s left
        #expect(try await provider.token() == first)
        clock.advance(by: 2)  // 59 s left: inside the margin
        let renewed = try await provider.token()
        #expect(renewed != first)
        #expect(renewed.issuedAt == Date(timeIntervalSince1970: 1_700_000_541))
        await provider.invalidate()
        #expect(try await provider.token() != renewed)
    }

    @Test("the key is read from a .p8 PEM, and a bad key is a configuration error")
    func p8() throws {
        let key = P256.Signing.PrivateKey()
        let credentials = try AppStoreServerAPICredentials(keyId: "K", issuerId: "I", bundleId: "B", privateKeyPEM: key.pemRepresentation)
        #expect(credentials.privateKey.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        #expect(!"\(credentials)".contains("PRIVATE"))
        #expect(throws: AppStoreClientError(.invalidConfiguration, reason: "")) {
            try AppStoreServerAPICredentials(keyId: "K", issuerId: "I", bundleId: "B", privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----")
        }
        #expect(throws: AppStoreClientError(.invalidConfiguration, reason: "")) {
            try AppStoreServerAPICredentials(keyId: "", issuerId: "I", bundleId: "B", privateKeyPEM: key.pemRepresentation)
        }
    }

    @Test("the stand-in accepts the client's tokens")
    func accepted() async throws {
        try await withServerAPI { api in
            let signed = try api.payloads.transaction("1")
            api.setData { $0.transactions["1"] = signed }
            _ = try await api.client.transactionInfo(transactionId: "1")
            _ = try await api.client.transactionInfo(transactionId: "1")
            #expect(api.standIn.authFailures.isEmpty)
        }
    }

    @Test("a client signing with another key is refused (401), not retried")
    func wrongKey() async throws {
        let (impostor, _) = AppleStandIn.ServerAPIAccount.makeTestPair(bundleId: appBundleId)
        try await withServerAPI(clientCredentials: impostor) { api in
            let error = await appStoreError { try await api.client.transactionInfo(transactionId: "1") }
            #expect(error?.code == .unauthorized)
            #expect(error?.isRetryable == false)
            #expect(api.standIn.authFailures == [.signature])
        }
    }

    struct BadToken: Sendable, CustomTestStringConvertible {
        let name: String
        let expected: AppleStandIn.AuthFailure
        let make: @Sendable (AppStoreServerAPICredentials, Int64) throws -> String
        var testDescription: String { name }
    }

    static let badTokens: [BadToken] = [
        BadToken(name: "expired", expected: .expired) { try AppStoreServerAPIToken(credentials: $0, iat: $1 - 4000, exp: $1 - 400, audience: "appstoreconnect-v1").compact },
        BadToken(name: "lives 61 minutes", expected: .lifetimeTooLong) { try AppStoreServerAPIToken(credentials: $0, iat: $1, exp: $1 + 3660, audience: "appstoreconnect-v1").compact },
        BadToken(name: "issued in the future", expected: .issuedInFuture) { try AppStoreServerAPIToken(credentials: $0, iat: $1 + 600, exp: $1 + 1200, audience: "appstoreconnect-v1").compact },
        BadToken(name: "another audience", expected: .audience) { try AppStoreServerAPIToken(credentials: $0, iat: $1, exp: $1 + 600, audience: "appstoreconnect-v2").compact },
        BadToken(name: "another bundle id", expected: .bundleId) { try AppStoreServerAPIToken(credentials: $0, iat: $1, exp: $1 + 600, audience: "appstoreconnect-v1", bundleId: "com.other").compact },
        BadToken(name: "another key id", expected: .keyId) { try AppStoreServerAPIToken(credentials: $0, iat: $1, exp: $1 + 600, audience: "appstoreconnect-v1", keyId: "OTHER").compact },
        BadToken(name: "another issuer", expected: .issuer) {
            try AppStoreServerAPIToken(credentials: AppStoreServerAPICredentials(keyId: $0.keyId, issuerId: "other-issuer", bundleId: $0.bundleId, privateKey: $0.privateKey), iat: $1, exp: $1 + 600, audience: "appstoreconnect-v1").compact
        },
        BadToken(name: "a changed claim", expected: .signature) {
            let token = try AppStoreServerAPIToken(credentials: $0, iat: $1, exp: $1 + 600, audience: "appstoreconnect-v1").compact
            let parts = token.split(separator: ".")
            let claims = "{\"iss\":\"\($0.issuerId)\",\"iat\":\($1),\"exp\":\($1 + 3000),\"aud\":\"appstoreconnect-v1\",\"bid\":\"\($0.bundleId)\"}"
            return "\(parts[0]).\(Base64.encode(Array(claims.utf8), url: true)).\(parts[2])"
        },
        BadToken(name: "alg none", expected: .algorithm) {
            let token = try AppStoreServerAPIToken(credentials: $0, iat: $1, exp: $1 + 600, audience: "appstoreconnect-v1").compact
            let parts = token.split(separator: ".")
            let header = "{\"alg\":\"none\",\"kid\":\"\($0.keyId)\",\"typ\":\"JWT\"}"
            return "\(Base64.encode(Array(header.utf8), url: true)).\(parts[1])."
        },
        BadToken(name: "not a JWT", expected: .malformed) { _, _ in "garbage" },
    ]

    @Test("the stand-in checks every claim and the signature", arguments: badTokens)
    func refused(_ bad: BadToken) async throws {
        try await withServerAPI { api in
            let token = try bad.make(api.credentials, Int64(Date().timeIntervalSince1970))
            let response = try await api.transport.send(
                TransportRequest(method: "GET", url: api.standIn.baseURL + "/sandbox/inApps/v1/transactions/1", headers: [.init("Authorization", "Bearer " + token)]),
                deadline: .now + .seconds(60)
            )
            #expect(response.status == 401)
            #expect(api.standIn.authFailures == [bad.expected])
        }
    }

    @Test("a request without a token is refused")
    func missing() async throws {
        try await withServerAPI { api in
            let response = try await api.transport.send(TransportRequest(method: "GET", url: api.standIn.baseURL + "/sandbox/inApps/v1/transactions/1"), deadline: .now + .seconds(60))
            #expect(response.status == 401)
            #expect(api.standIn.authFailures == [.missingToken])
        }
    }
}

/// A settable wall clock.
final class TestClock: Sendable {
    private let value: Mutex<Date>
    init(_ start: Date) { value = Mutex(start) }
    var now: Date { value.withLock { $0 } }
    func advance(by seconds: TimeInterval) { value.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

import Synchronization
