import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateTestSupport
import Testing

/// `storegate appstore …` against the stand-in, for the endpoints issue 33 added: what Apple
/// signs is verified before it is printed; Apple's refusals exit 1; unusable input exits 2.
@Suite("storegate appstore: app transaction, token, finish, renewal extensions")
struct AppStoreCLITests {
    static let bundleId = "com.example.storegate"

    /// The environment and trust directory that point `storegate appstore` at `standIn`.
    struct Setup: Sendable {
        let environment: [String: String]
        let trustDirectory: String
        let minter: JWSMinter

        func run(_ arguments: [String], extra: [String] = []) async throws -> CLI.Result {
            try await CLI.run(["appstore"] + arguments + ["--environment", "sandbox", "--trust-dir", trustDirectory] + extra, environment: environment)
        }
    }

    static func withStandIn<T: Sendable>(_ body: @Sendable (AppleStandIn, Setup) async throws -> T) async throws -> T {
        let (credentials, account) = AppleStandIn.ServerAPIAccount.makeTestPair(bundleId: bundleId)
        let key = try TemporaryFiles.file(Array(AppleStandIn.privateKeyPEM(of: credentials).utf8), name: "key.p8", prefix: "cli-appstore")
        let minter = try JWSMinter.shared()
        let trust = key.deletingLastPathComponent().appendingPathComponent("trust-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: trust, withIntermediateDirectories: true)
        try Data(minter.authority.root.der).write(to: trust.appendingPathComponent("test-root.der"))
        return try await AppleStandIn.run { standIn in
            standIn.setServerAPIAccount(account)
            standIn.updateServerAPIData(.sandbox, bundleId: bundleId) { _ in }
            let environment = [
                "STOREGATE_APPSTORE_KEY_ID": credentials.keyId,
                "STOREGATE_APPSTORE_ISSUER_ID": credentials.issuerId,
                "STOREGATE_APPSTORE_PRIVATE_KEY_FILE": key.path,
                "STOREGATE_BUNDLE_ID": bundleId,
                "STOREGATE_APPSTORE_API_URL_SANDBOX": standIn.serverAPIEndpoints.sandbox,
            ]
            return try await body(standIn, Setup(environment: environment, trustDirectory: trust.path, minter: minter))
        }
    }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not one JSON object: \(text)")
    }

    @Test("app-transaction prints the verified app transaction; a stranger's signature is refused, not printed")
    func appTransaction() async throws {
        try await Self.withStandIn { standIn, setup in
            let signed = try setup.minter.mint(json: JWSPayloads.appTransaction(bundleId: Self.bundleId))
            let stranger = try JWSMinter(authority: TestCertificateAuthority(keyKind: .p256, shape: .init(label: "Stranger")))
            let forged = try stranger.mint(json: JWSPayloads.appTransaction(bundleId: Self.bundleId))
            standIn.updateServerAPIData(.sandbox, bundleId: Self.bundleId) {
                $0.appTransactions["2000000000000001"] = signed
                $0.appTransactions["2000000000000002"] = forged
            }
            let result = try await setup.run(["app-transaction", "2000000000000001"])
            #expect(result.status == 0, "\(result.stderr)")
            let json = try Self.object(result.stdout)
            #expect(json["environment"] as? String == "Test")
            #expect(json["bundleId"] as? String == Self.bundleId)
            let payload = try #require(json["appTransaction"] as? [String: Any])
            #expect(payload["appTransactionId"] as? String == "704000000000000001")
            let refused = try await setup.run(["app-transaction", "2000000000000002"])
            #expect(refused.status == 1)
            #expect(refused.stdout.isEmpty)
            #expect(refused.stderr.contains("signed_payload_rejected"))
            let missing = try await setup.run(["app-transaction", "2000000000000404"])
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("4040019"))
        }
    }

    @Test("set-app-account-token and finish-transaction reach Apple and print what was done")
    func tokenAndFinish() async throws {
        try await Self.withStandIn { standIn, setup in
            standIn.updateServerAPIData(.sandbox, bundleId: Self.bundleId) {
                $0.purchases["2000000000000001"] = .init(productId: "com.example.monthly", transactionIds: ["2000000000000002"])
            }
            let token = "7E3FB20B-4CDB-47CC-936D-99D65F608138"
            let set = try await setup.run(["set-app-account-token", "2000000000000001", token])
            #expect(set.status == 0, "\(set.stderr)")
            #expect(try Self.object(set.stdout)["appAccountToken"] as? String == token.lowercased())
            #expect(standIn.purchase("2000000000000001", in: .sandbox)?.appAccountToken == token.lowercased())
            let notOriginal = try await setup.run(["set-app-account-token", "2000000000000002", token])
            #expect(notOriginal.status == 1)
            #expect(notOriginal.stderr.contains("4000187"))
            let notUUID = try await setup.run(["set-app-account-token", "2000000000000001", "account-42"])
            #expect(notUUID.status == 2)
            let finish = try await setup.run(["finish-transaction", "2000000000000002"])
            #expect(finish.status == 0, "\(finish.stderr)")
            #expect(try Self.object(finish.stdout)["finished"] as? Bool == true)
            #expect(standIn.finishedTransactions.map(\.transactionId) == ["2000000000000002"])
        }
    }

    @Test("extend, extend-all and extension-status drive Apple's renewal date extensions")
    func extensions() async throws {
        try await Self.withStandIn { standIn, setup in
            standIn.updateServerAPIData(.sandbox, bundleId: Self.bundleId) {
                $0.purchases["2000000000000001"] = .init(productId: "com.example.monthly", expiresDate: Date().addingTimeInterval(86_400))
                $0.massExtensionPendingReads = 0
            }
            let one = try await setup.run(["extend", "2000000000000001", "--days", "5", "--reason", "customer-satisfaction", "--request-id", "cli-1"])
            #expect(one.status == 0, "\(one.stderr)")
            let answer = try #require(try Self.object(one.stdout)["response"] as? [String: Any])
            #expect(answer["success"] as? Bool == true)
            let all = try await setup.run(["extend-all", "--product", "com.example.monthly", "--days", "2", "--reason", "other", "--request-id", "cli-mass", "--storefront", "USA"])
            #expect(all.status == 0, "\(all.stderr)")
            #expect(try Self.object(all.stdout)["requestIdentifier"] as? String == "cli-mass")
            let status = try await setup.run(["extension-status", "cli-mass", "--product", "com.example.monthly"])
            #expect(status.status == 0, "\(status.stderr)")
            let json = try Self.object(status.stdout)
            #expect(json["complete"] as? Bool == true)
            #expect(json["succeededCount"] as? Int == 1)
            let badReason = try await setup.run(["extend", "2000000000000001", "--days", "5", "--reason", "because"])
            #expect(badReason.status == 2)
            let tooLong = try await setup.run(["extend", "2000000000000001", "--days", "91", "--reason", "other"])
            #expect(tooLong.status == 2)
            let unknown = try await setup.run(["extension-status", "never", "--product", "com.example.monthly"])
            #expect(unknown.status == 1)
            #expect(unknown.stderr.contains("4040009"))
        }
    }

    @Test("the base URL is checked: plain http to another host is refused before any call")
    func baseURLChecked() async throws {
        try await Self.withStandIn { standIn, setup in
            let result = try await setup.run(["finish-transaction", "2000000000000001"], extra: ["--api-url", "http://api.example.com"])
            #expect(result.status == 2)
            #expect(result.stderr.contains("--api-url"))
            #expect(standIn.serverAPICalls.isEmpty)
        }
    }
}
