import Foundation
import StoreGateCore
import StoreGateSignedData
import StoreGateTestSupport
import Testing

@Suite("Test-signed JWS from Apple's library and Xcode", .enabled(if: SignedDataTesting.fixturesPresent, Comment(rawValue: Fixtures.missingMessage)))
struct TestSignedFixtureTests {
    /// A verifier trusting `anchor`: a file of the fixtures' certs folder, or `x5c:N`, the
    /// N-th certificate the JWS itself carries (Xcode's certificate, which the fixtures hold
    /// only inside its JWS; the own root of two of Apple's mocks).
    static func verifier(anchor: String?, of jws: String, bundleId: String, environments: Set<AppStoreEnvironment>) throws -> SignedDataVerifier {
        var store = TrustStore()
        if let anchor {
            if anchor.hasPrefix("x5c:"), let index = Int(anchor.dropFirst(4)) {
                let chain = try CompactJWS(jws).header.certificateChain
                try store.addOptInAnchor(der: try #require(Base64.decode(chain[index], mode: .standard)))
            } else {
                try store.addOptInAnchor(der: try SignedDataTesting.certificate(anchor))
            }
        }
        return SignedDataVerifier(
            expectations: .init(bundleId: bundleId, environments: environments),
            chainVerifier: CertificateChainVerifier(trustStore: store)
        )
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let file: String
        let kind: ProofKind
        let anchor: String
        let bundleId: String
        let environment: AppStoreEnvironment
        var testDescription: String { file }
    }

    static let testCA = "apple-asslib-testCA.der"
    static let xcodeBundle = "com.example.naturelab.backyardbirds.example"

    static let verifying: [Case] = [
        // It carries a root that is not testCA.der byte for byte (same name and key, other
        // validity): to RFC 5280 it is the same anchor, and Apple's libraries accept it.
        Case(file: "apple-asslib-mock-notification-test.jws", kind: .notification, anchor: testCA, bundleId: "com.example", environment: .test),
        Case(file: "apple-asslib-xcode-signed-transaction.jws", kind: .signedTransaction, anchor: "x5c:0", bundleId: xcodeBundle, environment: .xcode),
        Case(file: "apple-asslib-xcode-signed-renewal-info.jws", kind: .signedRenewalInfo, anchor: "x5c:0", bundleId: xcodeBundle, environment: .xcode),
        Case(file: "apple-asslib-xcode-signed-app-transaction.jws", kind: .appTransaction, anchor: "x5c:0", bundleId: xcodeBundle, environment: .xcode),
    ]

    @Test("verifies with its own certificate as opt-in anchor and is reported as Test or Xcode", arguments: verifying)
    func verifiesWithItsAnchor(_ test: Case) async throws {
        let jws = try #require(SignedDataTesting.fixture(test.file))
        let verifier = try Self.verifier(anchor: test.anchor, of: jws, bundleId: test.bundleId, environments: [test.environment])
        let details = try await verifier.verify(jws, as: test.kind)
        #expect(details.anchor == .optIn)
        #expect(details.environment == test.environment)
        #expect(details.environment != details.claimedEnvironment || details.environment == .xcode)
    }

    @Test("is refused without its anchor, even when every environment is accepted", arguments: verifying)
    func refusedWithoutAnchor(_ test: Case) async throws {
        let jws = try #require(SignedDataTesting.fixture(test.file))
        let verifier = try Self.verifier(anchor: nil, of: jws, bundleId: test.bundleId, environments: [.production, .sandbox, .xcode, .test, .localTesting])
        let error = await #expect(throws: SignedDataError.self) { _ = try await verifier.verify(jws, as: test.kind) }
        #expect(error?.code == .chain(.untrustedRoot))
    }

    @Test("is refused with the other test anchor", arguments: verifying)
    func refusedWithWrongAnchor(_ test: Case) async throws {
        let jws = try #require(SignedDataTesting.fixture(test.file))
        // Xcode's receipt-signing StoreKit certificate: an Apple test certificate, but not theirs.
        let verifier = try Self.verifier(anchor: "StoreKitTestCertificate.cer", of: jws, bundleId: test.bundleId, environments: [.xcode, .test])
        let error = await #expect(throws: SignedDataError.self) { _ = try await verifier.verify(jws, as: test.kind) }
        #expect(error?.step == .chain)
    }

    @Test("is not accepted as Sandbox or Production even with its anchor", arguments: verifying)
    func neverPassesAsAppleEnvironment(_ test: Case) async throws {
        let jws = try #require(SignedDataTesting.fixture(test.file))
        let verifier = try Self.verifier(anchor: test.anchor, of: jws, bundleId: test.bundleId, environments: [.production, .sandbox])
        let error = await #expect(throws: SignedDataError.self) { _ = try await verifier.verify(jws, as: test.kind) }
        #expect(error?.code == .environmentNotAccepted)
    }

    @Test("Apple's minimal mock transaction and renewal info name no purchase (no quantity, no originalTransactionId): their signature verifies, the payload step refuses them",
          arguments: [
            ("apple-asslib-mock-signed-transaction-info.jws", ProofKind.signedTransaction, "quantity"),
            ("apple-asslib-mock-signed-renewal-info.jws", ProofKind.signedRenewalInfo, "originalTransactionId"),
          ])
    func minimalMocksAreNoPurchase(_ file: String, _ kind: ProofKind, _ missing: String) async throws {
        let jws = try #require(SignedDataTesting.fixture(file))
        let verifier = try Self.verifier(anchor: Self.testCA, of: jws, bundleId: "com.example", environments: [.test])
        let report = await verifier.report(bytes: Array(jws.utf8), as: kind)
        #expect(report.failure?.code == .missingField)
        #expect(report.failure?.field == missing)
        #expect(report.steps.first { $0.step == .signature }?.status == .passed)
    }

    @Test("Apple's mock notification, whose x5c root is a re-issued testCA.der, verifies with testCA.der as anchor, and with its own root")
    func reissuedRootIsTheAnchor() async throws {
        let file = "apple-asslib-mock-notification-test.jws"
        let jws = try #require(SignedDataTesting.fixture(file))
        let listedRoot = try #require(Base64.decode(try CompactJWS(jws).header.certificateChain[2], mode: .standard))
        let testCA = try SignedDataTesting.certificate(Self.testCA)
        #expect(listedRoot != testCA, "the fixture's x5c[2] is another certificate object than testCA.der")
        let kind: ProofKind = .notification
        let withTestCA = try Self.verifier(anchor: Self.testCA, of: jws, bundleId: "com.example", environments: [.test])
        let details = try await withTestCA.verify(jws, as: kind)
        // The chain reports the anchor that validated it: testCA.der, by its fingerprint.
        #expect(details.chain.last?.sha256 == Fingerprint(of: testCA).description)
        let withOwnRoot = try Self.verifier(anchor: "x5c:2", of: jws, bundleId: "com.example", environments: [.test])
        #expect(try await withOwnRoot.verify(jws, as: kind).chain.last?.sha256 == Fingerprint(of: listedRoot).description)
    }

    @Test("the Xcode JWS verify only against their own certificate, not the receipts' StoreKit certificate")
    func xcodeNeedsItsOwnCertificate() async throws {
        let jws = try #require(SignedDataTesting.fixture("apple-asslib-xcode-signed-transaction.jws"))
        let leaf = try #require(Base64.decode(try CompactJWS(jws).header.certificateChain[0], mode: .standard))
        #expect(leaf != (try SignedDataTesting.certificate("StoreKitTestCertificate.cer")))
    }

    @Test("Xcode data keep their fractional milliseconds")
    func xcodeFractionalDates() async throws {
        let jws = try #require(SignedDataTesting.fixture("apple-asslib-xcode-signed-transaction.jws"))
        let verifier = try Self.verifier(anchor: "x5c:0", of: jws, bundleId: Self.xcodeBundle, environments: [.xcode])
        let verified = try await verifier.verifyTransaction(jws)
        let purchase = try #require(verified.payload.purchaseDate)
        #expect(abs(AppleDate.milliseconds(purchase) - 1_697_679_936_049.7297) < 0.001)
        #expect(verified.payload.offerType == .introductoryOffer)
        #expect(verified.payload.transactionReason == .purchase)
        #expect(verified.details.header.keyId == "Apple_Xcode_Key")
        #expect(verified.details.chain.count == 1)
    }

    @Test("the Xcode app transaction is dated by its receiptCreationDate")
    func xcodeAppTransaction() async throws {
        let jws = try #require(SignedDataTesting.fixture("apple-asslib-xcode-signed-app-transaction.jws"))
        let verifier = try Self.verifier(anchor: "x5c:0", of: jws, bundleId: Self.xcodeBundle, environments: [.xcode])
        let verified = try await verifier.verifyAppTransaction(jws)
        #expect(verified.details.signingTimeSource == .receiptCreationDate)
        #expect(verified.payload.receiptType == .xcode)
        #expect(verified.payload.applicationVersion == "1")
        #expect(verified.payload.originalApplicationVersion == "1")
        #expect(verified.payload.originalPurchaseDate == Date(timeIntervalSince1970: -62_135_769_600))
        #expect(verified.payload.deviceVerification == "cYUsXc53EbYc0pOeXG5d6/31LGHeVGf84sqSN0OrJi5u/j2H89WWKgS8N0hMsMlf")
        #expect(verified.proof.kind == .appTransaction)
    }

    @Test("Apple's wrong-bundle test notification is refused for com.example")
    func wrongBundleNotification() async throws {
        let jws = try #require(SignedDataTesting.fixture("apple-asslib-mock-notification-wrong-bundle-id.jws"))
        let verifier = try Self.verifier(anchor: Self.testCA, of: jws, bundleId: "com.example", environments: [.test])
        let error = await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyNotification(jws) }
        #expect(error?.code == .bundleIdMismatch)
        #expect(error?.field == "data.bundleId")
    }

    @Test("Apple's notification without x5c is refused in the structure step")
    func missingX5C() async throws {
        let jws = try #require(SignedDataTesting.fixture("apple-asslib-mock-notification-missing-x5c.jws"))
        let verifier = try Self.verifier(anchor: Self.testCA, of: jws, bundleId: "com.example", environments: [.test])
        let error = await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyNotification(jws) }
        #expect(error?.code == .missingCertificates)
        #expect(error?.step == .structure)
    }
}
