import Foundation
import StoreGateCore
import StoreGateReceipt
import StoreGateTestSupport
import Testing

/// What the independent reference decoder (PROVENANCE.md) printed for each Apple-signed receipt.
struct ReceiptFixture: Sendable, CustomStringConvertible {
    let file: String
    let bundleId: String
    let appVersion: String
    let created: String
    let purchases: Int
    let environment: AppStoreEnvironment
    let digest: ReceiptDigestAlgorithm

    var description: String { file }

    var bytes: [UInt8]? { Fixtures.bytes("receipts/\(file)") }
}

let appleSignedReceipts: [ReceiptFixture] = [
    .init(file: "tpinappreceipt-ios-production-2024-sha256-g5.der", bundleId: "org.getpure.pure-iphone", appVersion: "15741", created: "2024-02-23T17:27:16Z", purchases: 4, environment: .production, digest: .sha256),
    .init(file: "tpinappreceipt-ios-sandbox-2025-sha256-g5.der", bundleId: "dev.bonzer.weeka.app", appVersion: "2", created: "2025-12-26T18:39:47Z", purchases: 2, environment: .sandbox, digest: .sha256),
    .init(file: "tpinappreceipt-ios-sandbox-2020-sha1-187iap.der", bundleId: "com.nutcall.alert", appVersion: "32", created: "2020-05-06T18:28:49Z", purchases: 187, environment: .sandbox, digest: .sha1),
    .init(file: "tpinappreceipt-macos-sandbox-2020-sha1-noiap.der", bundleId: "de.holtwick.mac.PDFify", appVersion: "3.3.1b4", created: "2020-10-30T10:54:04Z", purchases: 0, environment: .sandbox, digest: .sha1),
    .init(file: "tpinappreceipt-ios-sandbox-2019-sha1-40iap.der", bundleId: "com.nutcall.app-dev", appVersion: "22", created: "2019-08-08T05:43:20Z", purchases: 40, environment: .sandbox, digest: .sha1),
    .init(file: "tpinappreceipt-ios-sandbox-2019-sha1-5iap.der", bundleId: "com.nutcall.app-dev", appVersion: "13", created: "2019-07-22T20:26:39Z", purchases: 5, environment: .sandbox, digest: .sha1),
    .init(file: "tpinappreceipt-ios-sandbox-2016-sha1-autorenew.der", bundleId: "com.whalerock.golfwang", appVersion: "1.4", created: "2016-08-27T06:06:32Z", purchases: 9, environment: .sandbox, digest: .sha1),
    .init(file: "revenuecat-ios-sandbox-2020-sha1-9iap.der", bundleId: "com.revenuecat.sampleapp", appVersion: "4", created: "2020-07-22T17:39:08Z", purchases: 9, environment: .sandbox, digest: .sha1),
    .init(file: "revenuecat-ios-sandbox-2015-sha1-7iap.der", bundleId: "com.mbaasy.ios.demo", appVersion: "1", created: "2015-08-13T07:50:46Z", purchases: 7, environment: .sandbox, digest: .sha1),
    .init(file: "revenuecat-ios-sandbox-2018-sha1-1iap.der", bundleId: "com.belive.app.ios", appVersion: "3", created: "2018-11-13T16:46:31Z", purchases: 1, environment: .sandbox, digest: .sha1),
    .init(file: "kvitto-ios-sandbox-2015-05-25-sha1-6iap.der", bundleId: "com.cocoanetics.EmmiView", appVersion: "246", created: "2015-05-25T15:22:10Z", purchases: 6, environment: .sandbox, digest: .sha1),
    .init(file: "kvitto-ios-sandbox-2015-05-23-sha1-1iap.der", bundleId: "com.cocoanetics.EmmiView", appVersion: "238", created: "2015-05-23T12:18:09Z", purchases: 1, environment: .sandbox, digest: .sha1),
    .init(file: "kvitto-ios-sandbox-2015-10-sha1-autorenew-6iap.der", bundleId: "de.emmi-club.manager", appVersion: "372", created: "2015-10-07T16:16:10Z", purchases: 6, environment: .sandbox, digest: .sha1),
    .init(file: "inapppurchase-ios-production-2015-sha1-noiap.der", bundleId: "com.mustafadur.Kargotakip", appVersion: "1.1.2", created: "2015-09-16T19:48:24Z", purchases: 0, environment: .production, digest: .sha1),
    .init(file: "appstoreiap-ios-sandbox-2020-11-08-sha1-42iap.der", bundleId: "com.twigano.fashion", appVersion: "36", created: "2020-11-08T16:00:57Z", purchases: 42, environment: .sandbox, digest: .sha1),
    .init(file: "appstoreiap-ios-sandbox-2020-12-29-sha1-1iap.der", bundleId: "com.twigano.fashion", appVersion: "69", created: "2020-12-29T19:32:54Z", purchases: 1, environment: .sandbox, digest: .sha1),
    .init(file: "asslrust-ios-sandbox-2025-sha256-g5.der", bundleId: "com.XMCodey.apple.ClipTrace", appVersion: "1.0.5", created: "2025-04-30T02:30:31Z", purchases: 1, environment: .sandbox, digest: .sha256),
]

let xcodeReceipts: [ReceiptFixture] = [
    .init(file: "apple-asslib-xcode-2023-empty.der", bundleId: "com.example.naturelab.backyardbirds.example", appVersion: "1", created: "2023-10-19T01:18:54Z", purchases: 0, environment: .xcode, digest: .sha256),
    .init(file: "apple-asslib-xcode-2023-with-transaction.der", bundleId: "com.example.naturelab.backyardbirds.example", appVersion: "1", created: "2023-10-19T01:45:40Z", purchases: 1, environment: .xcode, digest: .sha256),
    .init(file: "tpinappreceipt-xcode-2020-1iap.der", bundleId: "net.zachariadis.cyclemaps", appVersion: "31.10.0", created: "2020-07-22T17:33:15Z", purchases: 1, environment: .xcode, digest: .sha256),
    .init(file: "tpinappreceipt-xcode-2021-1iap.der", bundleId: "com.nutcall.alert", appVersion: "34", created: "2021-04-03T19:38:45Z", purchases: 1, environment: .xcode, digest: .sha256),
]

func iso(_ text: String) -> Date {
    ISO8601DateFormatter().date(from: text) ?? .distantPast
}

func receiptCode(_ error: any Error) -> ReceiptError.Code? {
    (error as? ReceiptError)?.code
}

@Suite("Real Apple-signed receipts", .enabled(if: Fixtures.directory != nil, Comment(rawValue: Fixtures.missingMessage)))
struct FixtureReceiptTests {
    @Test("every App Store receipt decodes to what the reference decoder read", arguments: appleSignedReceipts)
    func decodes(_ fixture: ReceiptFixture) throws {
        let bytes = try #require(fixture.bytes)
        let decoded = try UnverifiedReceipt(der: bytes)
        #expect(decoded.receipt.bundleId == fixture.bundleId)
        #expect(decoded.receipt.appVersion == fixture.appVersion)
        #expect(decoded.receipt.creationDate == iso(fixture.created))
        #expect(decoded.receipt.inAppPurchases.count == fixture.purchases)
        #expect(decoded.receipt.claimedEnvironment == fixture.environment)
        #expect(decoded.digestAlgorithm == fixture.digest)
        #expect(decoded.signatureAlgorithm == .rsaEncryption)
        #expect(decoded.certificates.count == 3)
    }

    @Test("every App Store receipt verifies at its creation date", arguments: appleSignedReceipts)
    func verifiesAtCreation(_ fixture: ReceiptFixture) async throws {
        let bytes = try #require(fixture.bytes)
        let verifier = ReceiptVerifier()
        let verified = try await verifier.verify(bytes, expecting: ReceiptExpectations(bundleId: fixture.bundleId, appVersion: fixture.appVersion))
        #expect(verified.environment == fixture.environment)
        #expect(verified.signer.anchor == .apple)
        #expect(verified.signer.chain.last?.sha256 == TrustStore.appleRootCA.description)
        #expect(verified.validationTime == iso(fixture.created))
        #expect(verified.transactions.count == fixture.purchases)
    }

    @Test("every App Store receipt fails as expired when checked today", arguments: appleSignedReceipts)
    func failsToday(_ fixture: ReceiptFixture) async throws {
        let bytes = try #require(fixture.bytes)
        let today = iso("2026-11-22T00:00:00Z")
        await #expect(throws: ReceiptError(.chain(.notValidAtSigningTime), reason: "")) {
            try await ReceiptVerifier().verify(bytes, expecting: ReceiptExpectations(bundleId: fixture.bundleId), at: .fixed(today))
        }
    }

    @Test("a receipt for another app is refused", arguments: appleSignedReceipts.prefix(3))
    func wrongBundle(_ fixture: ReceiptFixture) async throws {
        let bytes = try #require(fixture.bytes)
        await #expect(throws: ReceiptError(.bundleIdMismatch, reason: "")) {
            try await ReceiptVerifier().verify(bytes, expecting: ReceiptExpectations(bundleId: "com.attacker.app"))
        }
    }

    @Test("a production-only verifier refuses sandbox receipts and reports why")
    func productionOnly() async throws {
        let fixture = appleSignedReceipts[1]
        let bytes = try #require(fixture.bytes)
        await #expect(throws: ReceiptError(.environmentNotAccepted, reason: "")) {
            try await ReceiptVerifier().verify(bytes, expecting: ReceiptExpectations(bundleId: fixture.bundleId, environments: [.production]))
        }
    }

    @Test("Xcode receipts are refused without their certificate as an opt-in anchor", arguments: xcodeReceipts)
    func xcodeRefusedByDefault(_ fixture: ReceiptFixture) async throws {
        let bytes = try #require(fixture.bytes)
        await #expect(throws: ReceiptError(.chain(.untrustedRoot), reason: "")) {
            try await ReceiptVerifier().verify(bytes, expecting: ReceiptExpectations(bundleId: fixture.bundleId, environments: [.production, .sandbox, .xcode]))
        }
    }

    @Test("Xcode receipts verify with the StoreKit certificate as anchor and Xcode accepted, reported as Xcode", arguments: xcodeReceipts)
    func xcodeWithAnchor(_ fixture: ReceiptFixture) async throws {
        let bytes = try #require(fixture.bytes)
        let certificate = try #require(Fixtures.bytes("certs/StoreKitTestCertificate.cer"))
        var store = TrustStore()
        try store.addOptInAnchor(der: certificate)
        let verifier = ReceiptVerifier(chainVerifier: CertificateChainVerifier(trustStore: store))
        let verified = try await verifier.verify(bytes, expecting: ReceiptExpectations(bundleId: fixture.bundleId, environments: [.xcode]))
        #expect(verified.environment == .xcode)
        #expect(verified.signer.anchor == .optIn)
        #expect(verified.receipt.inAppPurchases.count == fixture.purchases)
        #expect(verified.receipt.creationDate == iso(fixture.created))

        await #expect(throws: ReceiptError(.environmentNotAccepted, reason: "")) {
            try await verifier.verify(bytes, expecting: ReceiptExpectations(bundleId: fixture.bundleId))
        }
    }

    @Test("iOS 6 style transaction receipts are refused with a typed error", arguments: ["inapppurchase-ios6-style-transaction-receipt.txt", "revenuecat-ios6-style-transaction-receipt-1.txt", "revenuecat-ios6-style-transaction-receipt-2.txt"])
    func ios6Receipts(_ file: String) async throws {
        let bytes = try #require(Fixtures.bytes("receipts/negative/\(file)"))
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            _ = try await ReceiptVerifier().verify(base64: text, expecting: ReceiptExpectations(bundleId: "any"))
            Issue.record("an iOS 6 transaction receipt verified")
        } catch {
            #expect([.notBase64, .malformedPKCS7].contains(error.code), "got \(error)")
        }
    }

    @Test("the chain cache serves a second receipt from the same certificates")
    func cacheServesSecondReceipt() async throws {
        let first = try #require(appleSignedReceipts[2].bytes)
        let second = try #require(Fixtures.bytes("receipts/tpinappreceipt-ios-sandbox-2019-sha1-5iap.der"))
        let chainVerifier = CertificateChainVerifier()
        let verifier = ReceiptVerifier(chainVerifier: chainVerifier)
        _ = try await verifier.verify(first, expecting: ReceiptExpectations(bundleId: "com.nutcall.alert"))
        #expect(chainVerifier.statistics == .init(validations: 1, cacheHits: 0))
        _ = try await verifier.verify(second, expecting: ReceiptExpectations(bundleId: "com.nutcall.app-dev"))
        #expect(chainVerifier.statistics == .init(validations: 1, cacheHits: 1))
        #expect(chainVerifier.cachedChainCount == 1)
        // The cache does not extend a chain's validity: today the same certificates are refused.
        await #expect(throws: ReceiptError(.chain(.notValidAtSigningTime), reason: "")) {
            try await verifier.verify(second, expecting: ReceiptExpectations(bundleId: "com.nutcall.app-dev"), at: .fixed(iso("2026-11-22T00:00:00Z")))
        }
    }
}
