import Foundation
import StoreGateCore
import StoreGateSignedData
import StoreGateTestSupport
import Testing

@Suite("App Store Server Notifications V2")
struct NotificationTests {
    let minter: JWSMinter
    let verifier: SignedDataVerifier

    init() throws {
        minter = try SignedDataTesting.minter()
        verifier = try SignedDataTesting.verifier()
    }

    func notification(
        transaction: [String: Any]? = JWSPayloads.transaction(),
        renewal: [String: Any]? = JWSPayloads.renewalInfo(),
        change: (inout [String: Any]) -> Void = { _ in }
    ) throws -> String {
        var payload = JWSPayloads.notification(
            signedTransactionInfo: try transaction.map { try minter.mint(json: $0) },
            signedRenewalInfo: try renewal.map { try minter.mint(json: $0) }
        )
        change(&payload)
        return try minter.mint(json: payload)
    }

    func failure(_ jws: String, with verifier: SignedDataVerifier? = nil) async -> SignedDataError? {
        let verifier = verifier ?? self.verifier
        return await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyNotification(jws) }
    }

    @Test("a notification verifies with its nested transaction and renewal info")
    func verifies() async throws {
        let verified = try await verifier.verifyNotification(try notification())
        #expect(verified.payload.notificationType == .didRenew)
        #expect(verified.transaction?.payload.transactionId == "2000000100000001")
        #expect(verified.renewalInfo?.payload.autoRenewStatus == .on)
        #expect(verified.transaction?.environment == .test)
        let ledger = verified.notification
        #expect(ledger.transaction?.productId == "com.example.storegate.monthly")
        #expect(ledger.renewalInfo?.willAutoRenew == true)
        #expect(ledger.bundleId == SignedDataTesting.bundleId)
        #expect(ledger.environment == .test)
    }

    @Test("a notification whose nested transaction belongs to another bundle is refused")
    func nestedOtherBundle() async throws {
        let jws = try notification(transaction: JWSPayloads.transaction(bundleId: "com.other.app"))
        let error = await failure(jws)
        #expect(error?.code == .nestedMismatch)
        #expect(error?.field == "data.signedTransactionInfo.bundleId")
    }

    @Test("nested data from another environment is refused", arguments: [true, false])
    func nestedOtherEnvironment(_ inTransaction: Bool) async throws {
        let jws = inTransaction
            ? try notification(transaction: JWSPayloads.transaction(environment: "Production"))
            : try notification(renewal: JWSPayloads.renewalInfo(environment: "Production"))
        let error = await failure(jws)
        #expect(error?.code == .nestedMismatch)
    }

    @Test("nested data with a broken signature is refused, naming the nested member")
    func nestedBadSignature() async throws {
        let good = try minter.mint(json: JWSPayloads.transaction())
        var changed = JWSPayloads.transaction()
        changed["quantity"] = 99
        let tampered = JWSMinter.replacingPayload(of: good, with: try JWSMinter.json(changed))
        let jws = try minter.mint(json: JWSPayloads.notification(signedTransactionInfo: tampered))
        let error = await failure(jws)
        #expect(error?.code == .signatureInvalid)
        #expect(error?.field == "data.signedTransactionInfo.signature")
    }

    @Test("nested data signed by an untrusted authority are refused")
    func nestedUntrusted() async throws {
        let stranger = try TestCertificateAuthority(keyKind: .p256, shape: .init(label: "Nested Stranger"))
        let foreign = try JWSMinter(authority: stranger).mint(json: JWSPayloads.transaction())
        let error = await failure(try minter.mint(json: JWSPayloads.notification(signedTransactionInfo: foreign)))
        #expect(error?.code == .chain(.untrustedRoot))
        #expect(error?.field == "data.signedTransactionInfo.header.x5c[2]")
    }

    @Test("nested data that is not a JWS is refused")
    func nestedGarbage() async throws {
        let error = await failure(try minter.mint(json: JWSPayloads.notification(signedTransactionInfo: "not-a-jws")))
        #expect(error?.code == .malformedCompactSerialization)
        #expect(error?.field?.hasPrefix("data.signedTransactionInfo") == true)
    }

    @Test("the notification's own bundle id and environment meet the expectations")
    func outerExpectations() async throws {
        let other = try minter.mint(json: JWSPayloads.notification(bundleId: "com.other.app"))
        #expect(await failure(other)?.code == .bundleIdMismatch)
        let sandboxOnly = try SignedDataTesting.verifier(expectations: .init(bundleId: SignedDataTesting.bundleId, environments: [.sandbox]))
        #expect(await failure(try notification(), with: sandboxOnly)?.code == .environmentNotAccepted)
    }

    @Test("a notification claiming Production needs the expected appAppleId")
    func productionAppAppleId() async throws {
        let jws = try minter.mint(json: JWSPayloads.notification(environment: "Production", appAppleId: 1234))
        #expect(await failure(jws)?.code == .appAppleIdRequired)
        let wrong = try SignedDataTesting.verifier(expectations: .init(bundleId: SignedDataTesting.bundleId, environments: [.test], appAppleId: 99))
        #expect(await failure(jws, with: wrong)?.code == .appAppleIdMismatch)
        let right = try SignedDataTesting.verifier(expectations: .init(bundleId: SignedDataTesting.bundleId, environments: [.test], appAppleId: 1234))
        #expect(try await right.verifyNotification(jws).payload.data?.appAppleId == 1234)
    }

    @Test("a notification without signedDate is dated by its nested data")
    func datedByNestedData() async throws {
        let payload = JWSPayloads.notification(
            signedDate: nil,
            signedTransactionInfo: try minter.mint(json: JWSPayloads.transaction(signedDate: Date(timeIntervalSince1970: 1_700_000_100))),
            signedRenewalInfo: try minter.mint(json: JWSPayloads.renewalInfo(signedDate: Date(timeIntervalSince1970: 1_700_000_050))))
        let verified = try await verifier.verifyNotification(try minter.mint(json: payload))
        #expect(verified.details.signingTimeSource == .nestedSignedDate)
        #expect(verified.details.signingTime == Date(timeIntervalSince1970: 1_700_000_100))
    }

    @Test("a notification dated by nothing is checked at the clock, and fails a maximum age")
    func undated() async throws {
        let jws = try minter.mint(json: JWSPayloads.notification(type: "TEST", signedDate: nil))
        let verified = try await verifier.verifyNotification(jws)
        #expect(verified.details.signingTimeSource == .clock)
        let aged = try SignedDataTesting.verifier(expectations: .init(bundleId: SignedDataTesting.bundleId, environments: [.test], maxAge: 3600))
        #expect(await failure(jws, with: aged)?.code == .signedDateMissing)
    }

    @Test("a summary notification names its app in summary")
    func summaryNotification() async throws {
        let payload: [String: Any] = [
            "notificationType": "RENEWAL_EXTENSION", "subtype": "SUMMARY",
            "notificationUUID": "0f0e0d0c-0b0a-4908-8706-050403020100", "version": "2.0",
            "signedDate": JWSPayloads.milliseconds(SignedDataTesting.signedDate),
            "summary": [
                "environment": "Sandbox", "bundleId": SignedDataTesting.bundleId, "productId": "p",
                "requestIdentifier": "r", "storefrontCountryCodes": ["USA", "FRA"], "succeededCount": 5, "failedCount": 0,
            ] as [String: Any],
        ]
        let verified = try await verifier.verifyNotification(try minter.mint(json: payload))
        #expect(verified.payload.summary?.storefrontCountryCodes == ["USA", "FRA"])
        #expect(verified.payload.subtype == .summary)
        #expect(verified.notification.transaction == nil)
    }

    @Test("an external purchase token names its environment by its identifier's prefix")
    func externalPurchaseToken() async throws {
        func token(_ id: String) throws -> String {
            try minter.mint(json: [
                "notificationType": "EXTERNAL_PURCHASE_TOKEN", "subtype": "UNREPORTED",
                "notificationUUID": "0f0e0d0c-0b0a-4908-8706-050403020101",
                "signedDate": JWSPayloads.milliseconds(SignedDataTesting.signedDate),
                "externalPurchaseToken": [
                    "externalPurchaseId": id, "tokenCreationDate": 1_700_000_000_000,
                    "appAppleId": 55, "bundleId": SignedDataTesting.bundleId,
                ] as [String: Any],
            ])
        }
        let sandbox = try await verifier.verifyNotification(try token("SANDBOX_b2a1"))
        #expect(sandbox.details.claimedEnvironment == .sandbox)
        // Anything else is production, which needs the appAppleId.
        #expect(await failure(try token("b2a1"))?.code == .appAppleIdRequired)
    }

    @Test("unknown notification types and subtypes are kept as they came")
    func unknownTypes() async throws {
        let jws = try notification { $0["notificationType"] = "SOMETHING_NEW"; $0["subtype"] = "BRAND_NEW" }
        let verified = try await verifier.verifyNotification(jws)
        #expect(verified.payload.notificationType?.rawValue == "SOMETHING_NEW")
        #expect(verified.notification.subtype == "BRAND_NEW")
    }
}
