import Foundation
import StoreGateCore
import StoreGateSignedData
import StoreGateTestSupport
import Testing

@Suite("Expectations: bundle id, environment, appAppleId, age")
struct ExpectationsTests {
    let minter: JWSMinter

    init() throws {
        minter = try SignedDataTesting.minter()
    }

    func verifier(_ expectations: SignedDataExpectations) throws -> SignedDataVerifier {
        try SignedDataTesting.verifier(expectations: expectations)
    }

    @Test("a transaction for another bundle is refused")
    func bundleMismatch() async throws {
        let jws = try minter.mint(json: JWSPayloads.transaction(bundleId: "com.attacker.app"))
        let verifier = try verifier(.init(bundleId: SignedDataTesting.bundleId, environments: [.test]))
        let error = await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyTransaction(jws) }
        #expect(error?.code == .bundleIdMismatch)
        #expect(error?.step == .expectations)
    }

    @Test("bundle ids compare exactly, case included")
    func bundleCase() async throws {
        let jws = try minter.mint(json: JWSPayloads.transaction(bundleId: "Com.Example.StoreGate"))
        let verifier = try verifier(.init(bundleId: "com.example.storegate", environments: [.test]))
        let error = await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyTransaction(jws) }
        #expect(error?.code == .bundleIdMismatch)
    }

    @Test("a transaction without a bundle id is refused in the payload step")
    func bundleMissing() async throws {
        var payload = JWSPayloads.transaction()
        payload["bundleId"] = nil
        let verifier = try verifier(.init(bundleId: SignedDataTesting.bundleId, environments: [.test]))
        let error = await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyTransaction(try minter.mint(json: payload)) }
        #expect(error?.code == .missingField)
        #expect(error?.field == "bundleId")
    }

    @Test("data anchored by a test CA is reported as Test, so Sandbox or Production expectations refuse it",
          arguments: ["Production", "Sandbox", "LocalTesting"])
    func testAnchorNeverProduction(_ claimed: String) async throws {
        let jws = try minter.mint(json: JWSPayloads.transaction(environment: claimed))
        let verifier = try verifier(.init(bundleId: SignedDataTesting.bundleId, environments: [.production, .sandbox, .localTesting]))
        let error = await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyTransaction(jws) }
        #expect(error?.code == .environmentNotAccepted)
    }

    @Test("data claiming Xcode under an opt-in anchor is reported as Xcode")
    func xcodeClaim() async throws {
        let jws = try minter.mint(json: JWSPayloads.transaction(environment: "Xcode"))
        let accepted = try await verifier(.init(bundleId: SignedDataTesting.bundleId, environments: [.xcode])).verifyTransaction(jws)
        #expect(accepted.environment == .xcode)
        let refused = try verifier(.init(bundleId: SignedDataTesting.bundleId, environments: [.test]))
        let error = await #expect(throws: SignedDataError.self) { _ = try await refused.verifyTransaction(jws) }
        #expect(error?.code == .environmentNotAccepted)
    }

    @Test("a payload without an environment is refused")
    func environmentMissing() async throws {
        var payload = JWSPayloads.transaction()
        payload["environment"] = nil
        let verifier = try verifier(.init(bundleId: SignedDataTesting.bundleId, environments: [.test]))
        let error = await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyTransaction(try minter.mint(json: payload)) }
        #expect(error?.code == .environmentNotAccepted)
    }

    @Test("an unknown environment is kept as it came and refused unless accepted")
    func unknownEnvironment() async throws {
        let jws = try minter.mint(json: JWSPayloads.transaction(environment: "Staging"))
        let verifier = try verifier(.init(bundleId: SignedDataTesting.bundleId, environments: [.test]))
        let verified = try await verifier.verifyTransaction(jws)
        #expect(verified.payload.environment == AppStoreEnvironment(rawValue: "Staging"))
        #expect(verified.environment == .test)
    }

    @Test("maxAge refuses a signedDate older than allowed by the verifier's clock")
    func maxAge() async throws {
        // The test clock stands 600 s after signedDate.
        let jws = try minter.mint(json: JWSPayloads.transaction())
        let strict = try verifier(.init(bundleId: SignedDataTesting.bundleId, environments: [.test], maxAge: 300))
        let error = await #expect(throws: SignedDataError.self) { _ = try await strict.verifyTransaction(jws) }
        #expect(error?.code == .signedDateTooOld)
        let lenient = try verifier(.init(bundleId: SignedDataTesting.bundleId, environments: [.test], maxAge: 3600))
        _ = try await lenient.verifyTransaction(jws)
    }

    @Test("a production app transaction needs the expected appAppleId")
    func appTransactionAppAppleId() async throws {
        let jws = try minter.mint(json: JWSPayloads.appTransaction(receiptType: "Production", appAppleId: 1_234_567_890))
        let missing = try verifier(.init(bundleId: SignedDataTesting.bundleId, environments: [.test]))
        let error = await #expect(throws: SignedDataError.self) { _ = try await missing.verifyAppTransaction(jws) }
        #expect(error?.code == .appAppleIdRequired)
        let wrong = try verifier(.init(bundleId: SignedDataTesting.bundleId, environments: [.test], appAppleId: 42))
        let mismatch = await #expect(throws: SignedDataError.self) { _ = try await wrong.verifyAppTransaction(jws) }
        #expect(mismatch?.code == .appAppleIdMismatch)
        let right = try verifier(.init(bundleId: SignedDataTesting.bundleId, environments: [.test], appAppleId: 1_234_567_890))
        let verified = try await right.verifyAppTransaction(jws)
        #expect(verified.payload.appAppleId == 1_234_567_890)
        #expect(verified.payload.originalPlatform == .iOS)
        #expect(verified.proof.bundleId == SignedDataTesting.bundleId)
    }

    @Test("a sandbox app transaction without appAppleId verifies without one expected")
    func sandboxAppTransaction() async throws {
        let jws = try minter.mint(json: JWSPayloads.appTransaction())
        let verified = try await verifier(.init(bundleId: SignedDataTesting.bundleId, environments: [.test])).verifyAppTransaction(jws)
        #expect(verified.payload.receiptType == .sandbox)
        #expect(verified.details.signingTimeSource == .signedDate)
    }

    @Test("renewal infos carry no bundle id: environment and age still apply")
    func renewalInfo() async throws {
        let jws = try minter.mint(json: JWSPayloads.renewalInfo())
        let verified = try await verifier(.init(bundleId: "anything", environments: [.test])).verifyRenewalInfo(jws)
        let renewal = verified.renewalInfo
        #expect(renewal.willAutoRenew)
        #expect(renewal.environment == .test)
        let sandboxOnly = try verifier(.init(bundleId: "anything", environments: [.sandbox]))
        let error = await #expect(throws: SignedDataError.self) { _ = try await sandboxOnly.verifyRenewalInfo(jws) }
        #expect(error?.code == .environmentNotAccepted)
    }

    @Test("the members the ledger needs are checked in the payload step, so a verified transaction always has them",
          arguments: ["transactionId", "originalTransactionId", "productId", "purchaseDate", "quantity"])
    func ledgerShapeNeedsMembers(_ member: String) async throws {
        var payload = JWSPayloads.transaction()
        payload[member] = nil
        let verifier = try verifier(.init(bundleId: SignedDataTesting.bundleId, environments: [.test]))
        let error = await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyTransaction(try minter.mint(json: payload)) }
        #expect(error?.code == .missingField)
        #expect(error?.step == .payload)
        #expect(error?.field == member)
    }

    @Test("a renewal info sent with a transaction must be for the same subscription; it is part of the verified proof")
    func transactionWithRenewalInfo() async throws {
        let verifier = try verifier(.init(bundleId: SignedDataTesting.bundleId, environments: [.test]))
        let transaction = try minter.mint(json: JWSPayloads.transaction())
        let matching = try minter.mint(json: JWSPayloads.renewalInfo())
        let verified = try await verifier.verifyTransaction(transaction, renewalInfo: matching)
        #expect(verified.proof.renewalInfo?.originalTransactionId == verified.transaction.originalTransactionId)
        let other = try minter.mint(json: JWSPayloads.renewalInfo(originalTransactionId: "2000000999999999"))
        let mismatch = await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyTransaction(transaction, renewalInfo: other) }
        #expect(mismatch?.code == .renewalInfoMismatch)
        #expect(mismatch?.step == .expectations)
        var broken = JWSPayloads.renewalInfo()
        broken["productId"] = nil
        let nested = await #expect(throws: SignedDataError.self) {
            _ = try await verifier.verifyTransaction(transaction, renewalInfo: try minter.mint(json: broken))
        }
        #expect(nested?.code == .missingField)
        #expect(nested?.field == "signedRenewalInfo.productId")
        let alone = try await verifier.verifyTransaction(transaction, renewalInfo: String?.none)
        #expect(alone.renewalInfo == nil)
    }

    @Test("expectations are per call: one verifier serves several apps, and verify(bytes:as:) handles every kind")
    func perCallExpectations() async throws {
        let verifier = try verifier(.init(bundleId: "com.example.other", environments: [.test]))
        let jws = try minter.mint(json: JWSPayloads.transaction())
        let refused = await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyTransaction(jws) }
        #expect(refused?.code == .bundleIdMismatch)
        let ours = SignedDataExpectations(bundleId: SignedDataTesting.bundleId, environments: [.test])
        #expect(try await verifier.verifyTransaction(jws, expecting: ours).transaction.bundleId == SignedDataTesting.bundleId)
        guard case .transaction(let verified) = try await verifier.verify(bytes: Array(jws.utf8), as: .signedTransaction, expecting: ours) else {
            Issue.record("verify(bytes:as:) answered another kind")
            return
        }
        #expect(verified.details.kind == .signedTransaction)
        let renewal = try minter.mint(json: JWSPayloads.renewalInfo())
        guard case .renewalInfo = try await verifier.verify(bytes: Array(renewal.utf8), as: .signedRenewalInfo, expecting: ours) else {
            Issue.record("verify(bytes:as:) answered another kind")
            return
        }
        let wrongKind = await #expect(throws: SignedDataError.self) { _ = try await verifier.verify(bytes: Array(jws.utf8), as: .appReceipt) }
        #expect(wrongKind?.code == .invalidField)
    }
}
