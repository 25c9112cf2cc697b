import Foundation
import StoreGateCore
import StoreGateSignedData
import StoreGateTestSupport
import Testing

@Suite("Real Apple-signed JWS", .enabled(if: SignedDataTesting.fixturesPresent, Comment(rawValue: Fixtures.missingMessage)))
struct RealFixtureTests {
    static let testSigned = [
        "apple-asslib-mock-notification-missing-x5c.jws",
        "apple-asslib-mock-notification-test.jws",
        "apple-asslib-mock-notification-wrong-bundle-id.jws",
        "apple-asslib-mock-signed-renewal-info.jws",
        "apple-asslib-mock-signed-transaction-info.jws",
        "apple-asslib-xcode-signed-app-transaction.jws",
        "apple-asslib-xcode-signed-renewal-info.jws",
        "apple-asslib-xcode-signed-transaction.jws",
    ]

    static func verifier(for fixture: RealFixture, validationTime: SignedDataVerifier.ValidationTime = .signingTime) -> SignedDataVerifier {
        SignedDataVerifier(
            expectations: SignedDataExpectations(bundleId: fixture.bundleId, environments: [.production, .sandbox], appAppleId: nil),
            chainVerifier: CertificateChainVerifier(),
            validationTime: validationTime
        )
    }

    @Test("every file in the fixtures' jws folder is either a real fixture or a known test-signed one")
    func everyFixtureIsClassified() {
        let names = Set(Fixtures.files(in: "jws", withExtension: "jws").map(\.lastPathComponent))
        let known = Set(RealFixture.all.map(\.file)).union(Self.testSigned)
        #expect(names == known)
    }

    @Test("verifies at its signedDate against the pinned Apple Root CA - G3", arguments: RealFixture.all)
    func verifiesAtSigningTime(_ fixture: RealFixture) async throws {
        let jws = try #require(SignedDataTesting.fixture(fixture.file))
        let details = try await Self.verifier(for: fixture).verify(jws, as: fixture.kind)
        #expect(details.anchor == .apple)
        #expect(details.environment == fixture.environment)
        #expect(details.chain.count == 3)
        #expect(details.chain.last?.sha256 == TrustStore.appleRootCAG3.description)
        #expect(JWSPayloads.milliseconds(details.validationTime) == fixture.signedMilliseconds)
        #expect(!details.chainCacheHit)
    }

    @Test("fails as expired when checked at today's date", arguments: RealFixture.all)
    func failsAtToday(_ fixture: RealFixture) async throws {
        let jws = try #require(SignedDataTesting.fixture(fixture.file))
        let error = await #expect(throws: SignedDataError.self) {
            _ = try await Self.verifier(for: fixture, validationTime: .now).verify(jws, as: fixture.kind)
        }
        #expect(error?.step == .chain)
        #expect(error?.code == .chain(.notValidAtSigningTime))
    }

    @Test("a second verification takes the chain from the cache", arguments: RealFixture.all)
    func secondVerificationIsCached(_ fixture: RealFixture) async throws {
        let jws = try #require(SignedDataTesting.fixture(fixture.file))
        let verifier = Self.verifier(for: fixture)
        _ = try await verifier.verify(jws, as: fixture.kind)
        let second = try await verifier.verify(jws, as: fixture.kind)
        #expect(second.chainCacheHit)
        #expect(second.anchor == .apple)
    }

    @Test("a cached chain does not make an expired check pass", arguments: RealFixture.all)
    func cacheDoesNotOutliveValidity(_ fixture: RealFixture) async throws {
        let jws = try #require(SignedDataTesting.fixture(fixture.file))
        let chains = CertificateChainVerifier()
        let warm = SignedDataVerifier(expectations: .init(bundleId: fixture.bundleId), chainVerifier: chains)
        _ = try await warm.verify(jws, as: fixture.kind)
        let now = SignedDataVerifier(expectations: .init(bundleId: fixture.bundleId), chainVerifier: chains, validationTime: .now)
        let error = await #expect(throws: SignedDataError.self) { _ = try await now.verify(jws, as: fixture.kind) }
        #expect(error?.code == .chain(.notValidAtSigningTime))
    }

    @Test("decodes the 2022 sandbox subscription transaction field by field")
    func decodesSandboxTransaction() async throws {
        let jws = try #require(SignedDataTesting.fixture("gopay-sandbox-2022-11-signed-transaction-info-a.jws"))
        let verified = try await SignedDataVerifier(expectations: .init(bundleId: "Com.VoiceRecording.Telephone")).verifyTransaction(jws)
        let payload = verified.payload
        #expect(payload.transactionId == "2000000184445477")
        #expect(payload.originalTransactionId == "2000000184445477")
        #expect(payload.webOrderLineItemId == "2000000013429558")
        #expect(payload.productId == "Com.VoiceRecording.Telephone.103")
        #expect(payload.subscriptionGroupIdentifier == "21024612")
        #expect(payload.purchaseDate == Date(timeIntervalSince1970: 1_666_615_873))
        #expect(payload.originalPurchaseDate == Date(timeIntervalSince1970: 1_666_615_875))
        #expect(payload.expiresDate == Date(timeIntervalSince1970: 1_666_615_993))
        #expect(payload.quantity == 1)
        #expect(payload.type == .autoRenewable)
        #expect(payload.appAccountToken == UUID(uuidString: "207262da-1ac8-4e0a-a399-5aa62a82800f"))
        #expect(payload.inAppOwnershipType == .purchased)
        #expect(payload.offerType == .introductoryOffer)
        #expect(payload.environment == .sandbox)

        let transaction = verified.transaction
        #expect(transaction.environment == .sandbox)
        #expect(transaction.bundleId == "Com.VoiceRecording.Telephone")
        #expect(transaction.productType == .autoRenewable)
        #expect(transaction.signedDate == Date(timeIntervalSince1970: 1_667_559_685.499))
        let proof = verified.proof
        #expect(proof.kind == .signedTransaction)
        #expect(proof.transactions == [transaction])
        #expect(proof.rawProof == Array(jws.utf8))
    }

    @Test("verifies the DID_RENEW notification with its nested transaction and renewal info")
    func verifiesNotificationWithNestedData() async throws {
        let jws = try #require(SignedDataTesting.fixture("gopay-sandbox-2022-03-notification-did-renew.jws"))
        let verified = try await SignedDataVerifier(expectations: .init(bundleId: "com.audaos.audarecorder")).verifyNotification(jws)
        #expect(verified.payload.notificationType == .didRenew)
        #expect(verified.payload.version == "2.0")
        #expect(verified.payload.data?.bundleVersion == "7")
        // No signedDate of its own: dated by its nested data.
        #expect(verified.payload.signedDate == nil)
        #expect(verified.details.signingTimeSource == .nestedSignedDate)
        let transaction = try #require(verified.transaction)
        #expect(transaction.payload.transactionId == "2000000004047119")
        #expect(transaction.payload.bundleId == "com.audaos.audarecorder")
        let renewal = try #require(verified.renewalInfo)
        #expect(renewal.payload.autoRenewStatus == .on)
        #expect(renewal.payload.autoRenewProductId == "com.audaos.audarecorder.vip.m2")

        let notification = verified.notification
        #expect(notification.notificationType == "DID_RENEW")
        #expect(notification.notificationUUID == "469bf30e-7715-4f9f-aae3-a7bfc12aea77")
        #expect(notification.environment == .sandbox)
        #expect(notification.transaction?.transactionId == "2000000004047119")
        #expect(notification.renewalInfo?.willAutoRenew == true)
    }

    @Test("a production transaction is refused unless production is accepted")
    func productionNeedsAcceptance() async throws {
        let jws = try #require(SignedDataTesting.fixture("gopay-production-2023-06-signed-transaction-info-nested.jws"))
        let verifier = SignedDataVerifier(expectations: .init(bundleId: "com.jrjj.keysns", environments: [.sandbox]))
        let error = await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyTransaction(jws) }
        #expect(error?.code == .environmentNotAccepted)
        #expect(error?.step == .expectations)
    }

    @Test("a real renewal info verifies as a renewal info and yields the ledger's renewal state")
    func renewalInfoLedgerShape() async throws {
        let jws = try #require(SignedDataTesting.fixture("goiap-sandbox-2023-05-signed-renewal-info.jws"))
        let verified = try await SignedDataVerifier(expectations: .init(bundleId: "unused")).verifyRenewalInfo(jws)
        let renewal = verified.renewalInfo
        #expect(renewal.originalTransactionId == "2000000335310644")
        #expect(renewal.productId == "co.ringalarm.swtich.quarterly2")
        #expect(renewal.willAutoRenew)
        #expect(verified.payload.recentSubscriptionStartDate == Date(timeIntervalSince1970: 1_684_822_738))
    }
}
