import Foundation
import StoreGateCore
import StoreGateSignedData
import StoreGateTestSupport
import Testing

/// Shared fixtures of the SignedData tests: a verifier trusting the shared test CA, and
/// the real fixtures with what they are expected to say.
enum SignedDataTesting {
    static let bundleId = "com.example.storegate"
    static let signedDate = Date(timeIntervalSince1970: 1_700_000_000)

    /// The shared P-256 test authority's minter.
    static func minter() throws -> JWSMinter { try JWSMinter.shared() }

    /// A verifier trusting `authority` as opt-in anchor and accepting the `Test` environment.
    static func verifier(
        trusting authority: TestCertificateAuthority? = nil,
        expectations: SignedDataExpectations? = nil,
        validationTime: SignedDataVerifier.ValidationTime = .signingTime,
        limits: Limits = .default,
        now: Date = Date(timeIntervalSince1970: 1_700_000_600)
    ) throws -> SignedDataVerifier {
        let authority = try authority ?? TestCertificateAuthority.shared(.p256)
        return SignedDataVerifier(
            expectations: expectations ?? SignedDataExpectations(bundleId: bundleId, environments: [.test]),
            chainVerifier: CertificateChainVerifier(trustStore: try authority.trustStore()),
            limits: limits,
            validationTime: validationTime,
            clock: { now }
        )
    }

    /// A fixture's text, `nil` when the fixtures are absent.
    static func fixture(_ name: String) -> String? {
        Fixtures.bytes("jws/\(name)").map { String(decoding: $0, as: UTF8.self) }
    }

    /// A fixture certificate's DER.
    static func certificate(_ name: String) throws -> [UInt8] {
        try #require(Fixtures.bytes("certs/\(name)"))
    }

    static var fixturesPresent: Bool { Fixtures.directory != nil }
}

/// One real Apple-signed fixture and what it says.
struct RealFixture: Sendable, CustomTestStringConvertible {
    let file: String
    let kind: ProofKind
    let bundleId: String
    let environment: AppStoreEnvironment
    /// The time it is dated by (its signedDate, or its nested one).
    let signedMilliseconds: Int64

    var testDescription: String { file }

    /// Every real Apple-signed JWS in ../shared/fixtures/jws.
    static let all: [RealFixture] = [
        RealFixture(file: "goiap-sandbox-2023-05-signed-renewal-info.jws", kind: .signedRenewalInfo, bundleId: "", environment: .sandbox, signedMilliseconds: 1_684_822_778_492),
        RealFixture(file: "gopay-production-2023-06-signed-transaction-info-nested.jws", kind: .signedTransaction, bundleId: "com.jrjj.keysns", environment: .production, signedMilliseconds: 1_687_941_512_573),
        RealFixture(file: "gopay-sandbox-2022-03-notification-did-renew.jws", kind: .notification, bundleId: "com.audaos.audarecorder", environment: .sandbox, signedMilliseconds: 1_646_387_008_254),
        RealFixture(file: "gopay-sandbox-2022-03-signed-renewal-info.jws", kind: .signedRenewalInfo, bundleId: "", environment: .sandbox, signedMilliseconds: 1_646_387_008_228),
        RealFixture(file: "gopay-sandbox-2022-03-signed-transaction-info.jws", kind: .signedTransaction, bundleId: "com.audaos.audarecorder", environment: .sandbox, signedMilliseconds: 1_646_387_008_254),
        RealFixture(file: "gopay-sandbox-2022-11-signed-transaction-info-a.jws", kind: .signedTransaction, bundleId: "Com.VoiceRecording.Telephone", environment: .sandbox, signedMilliseconds: 1_667_559_685_499),
        RealFixture(file: "gopay-sandbox-2022-11-signed-transaction-info-b.jws", kind: .signedTransaction, bundleId: "Com.VoiceRecording.Telephone", environment: .sandbox, signedMilliseconds: 1_667_561_039_251),
    ]
}

extension SignedDataVerifier {
    /// Verifies `jws` as `kind`, returning how it was verified.
    func verify(_ jws: String, as kind: ProofKind) async throws(SignedDataError) -> SignedDataDetails {
        switch kind {
        case .signedTransaction: return try await verifyTransaction(jws).details
        case .signedRenewalInfo: return try await verifyRenewalInfo(jws).details
        case .appTransaction: return try await verifyAppTransaction(jws).details
        default: return try await verifyNotification(jws).details
        }
    }
}
