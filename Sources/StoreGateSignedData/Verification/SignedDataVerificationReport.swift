public import Foundation
public import StoreGateCore
import X509

/// Every step of verifying one JWS, with what each step checked: what `storegate verify`
/// prints, and the JWS counterpart of receipts' report.
///
/// Only ``SignedDataVerifier/report(bytes:as:expecting:)`` makes one. ``isValid`` is the verifier's
/// verdict; ``payload`` is the decoded payload whenever it decodes, verified only when
/// ``isValid`` is `true`.
public struct SignedDataVerificationReport: Sendable {
    /// A notification's nested signed data, each verified on its own.
    public struct NestedReport: Sendable {
        /// The member holding it (`data.signedTransactionInfo`, …).
        public let member: String
        /// How it was verified.
        public let details: SignedDataDetails
        /// Its payload.
        public let payload: UnverifiedSignedData.Payload

        static func all(_ nested: SignedDataVerifier.Nested) -> [NestedReport] {
            var reports: [NestedReport] = []
            if let transaction = nested.transaction {
                reports.append(.init(member: "data.signedTransactionInfo", details: transaction.details, payload: .transaction(transaction.payload)))
            }
            if let renewalInfo = nested.renewalInfo {
                reports.append(.init(member: "data.signedRenewalInfo", details: renewalInfo.details, payload: .renewalInfo(renewalInfo.payload)))
            }
            if let appTransaction = nested.appTransaction {
                reports.append(.init(member: "appData.signedAppTransactionInfo", details: appTransaction.details, payload: .appTransaction(appTransaction.payload)))
            }
            return reports
        }
    }

    /// The kind verified as.
    public let kind: ProofKind
    /// The input's size in bytes.
    public let size: Int
    /// The expectations checked.
    public let expectations: SignedDataExpectations
    let limits: Limits
    /// The first failure, or `nil` when the JWS is valid.
    public internal(set) var failure: SignedDataError?
    /// How it was verified, when it is valid.
    public private(set) var details: SignedDataDetails?
    /// The protected header, when it decodes.
    public private(set) var header: JWSHeader?
    /// The subject of each `x5c` certificate, as listed.
    public private(set) var certificateSubjects: [String] = []
    /// The decoded payload, when it decodes (verified only when ``isValid``).
    public private(set) var payload: UnverifiedSignedData.Payload?
    /// The bundle id the payload names, when valid.
    public private(set) var bundleId: String?
    /// The validated chain, once the chain step passed (also when the expectations failed).
    public private(set) var signer: ValidatedSigner?
    /// The time the chain was checked at, once the chain step passed.
    public private(set) var validationTime: Date?
    /// The signing time and where it came from, once the chain step passed.
    public private(set) var signingTime: Date?
    public private(set) var signingTimeSource: SignedDataDetails.SigningTimeSource?
    /// Whether the chain came from the chain cache.
    public private(set) var chainCacheHit = false
    /// A notification's nested signed data, once verified.
    public internal(set) var nested: [NestedReport] = []
    /// Every expectation's result, in the order run (empty when an earlier step failed).
    public internal(set) var checks: [ExpectationCheck] = []

    /// Whether the JWS is valid.
    public var isValid: Bool { failure == nil }

    init(kind: ProofKind, size: Int, expectations: SignedDataExpectations, limits: Limits) {
        self.kind = kind
        self.size = size
        self.expectations = expectations
        self.limits = limits
    }

    mutating func verified(_ details: SignedDataDetails, _ payload: UnverifiedSignedData.Payload, bundleId: String?) {
        self.details = details
        self.payload = payload
        self.bundleId = bundleId
    }

    mutating func authenticated(
        _ signer: ValidatedSigner, validationTime: Date, signingTime: Date, source: SignedDataDetails.SigningTimeSource, cacheHit: Bool
    ) {
        self.signer = signer
        self.validationTime = validationTime
        self.signingTime = signingTime
        self.signingTimeSource = source
        self.chainCacheHit = cacheHit
    }

    /// Reads the header, certificate subjects and payload again for the report, as far as
    /// each decodes (the verdict is already the verifier's).
    mutating func read(_ bytes: [UInt8], limits: Limits) {
        let jws: CompactJWS
        do {
            jws = try CompactJWS(bytes: bytes, limits: limits)
        } catch {
            return
        }
        header = jws.header
        certificateSubjects = jws.header.certificateChain.map { string in
            guard let der = Base64.decode(string, mode: .standard) else { return "(not base64)" }
            do {
                return try CandidateCertificate(der: der).certificate.subject.description
            } catch {
                return "(not a certificate)"
            }
        }
        if payload == nil {
            do {
                payload = try UnverifiedSignedData(bytes: bytes, kind: kind, limits: limits).payload
            } catch {
                payload = nil
            }
        }
    }

    /// The steps in order, each with what it checked.
    public var steps: [VerificationStepReport] {
        VerificationStepReport.steps(
            [.input, .structure, .signature, .payload, .chain, .expectations],
            failedStep: failure?.step,
            failure: failure.map { "\($0.code)\($0.field.map { " [\($0)]" } ?? ""): \($0.reason)" } ?? "",
            passDetail: passDetail
        )
    }

    private func passDetail(_ step: VerificationStep) -> String {
        switch step {
        case .input:
            return "\(size) bytes, within the \(limits.maxJWSBytes)-byte limit"
        case .structure:
            guard let header else { return "compact JWS" }
            return "compact JWS, alg \(header.algorithm), x5c of \(header.certificateChain.count)\(header.keyId.map { ", kid \($0)" } ?? "")"
        case .signature:
            return "ES256 (ECDSA P-256, SHA-256) over header.payload with the key of x5c[0], \(certificateSubjects.first ?? "?")"
        case .payload:
            var text = kind.rawValue
            if case .notification(let notification)? = payload {
                text += " \(notification.notificationType?.rawValue ?? "?")\(notification.subtype.map { "/\($0.rawValue)" } ?? "")"
            }
            if let signingTime, let signingTimeSource {
                text += ", signed \(Self.iso(signingTime)) (\(signingTimeSource.rawValue))"
            }
            if !nested.isEmpty {
                text += "; nested " + nested.map(\.member).joined(separator: ", ") + ", each verified the same way"
            }
            return text
        case .chain:
            guard let signer, let validationTime else { return "" }
            let roles = signer.chain.count == 1 ? ["anchor"] : ["leaf", "intermediate", "root"]
            let links = zip(roles, signer.chain).map { role, certificate in "\(role) \(certificate.subject)" }.joined(separator: " → ")
            let anchor = signer.anchor == .apple ? "the pinned Apple Root CA - G3" : "an opt-in anchor"
            let fingerprint = signer.chain.last.map { ", SHA-256 \($0.sha256)" } ?? ""
            let source = signingTimeSource.map { " (\($0.rawValue))" } ?? ""
            return "\(links); anchored by \(anchor)\(fingerprint); every certificate valid at \(Self.iso(validationTime))\(source)"
                + (chainCacheHit ? ", from the chain cache" : "")
        case .expectations:
            var claims: [String] = []
            if let bundleId { claims.append("bundleId \(bundleId)") }
            let accepted = expectations.environments.map(\.rawValue).sorted().joined(separator: ", ")
            if let details {
                let environment = details.environment == details.claimedEnvironment
                    ? details.environment.rawValue : "\(details.environment.rawValue) (claims \(details.claimedEnvironment.rawValue))"
                claims.append("environment \(environment) among \(accepted)")
            }
            if let appAppleId = expectations.appAppleId { claims.append("appAppleId \(appAppleId)") }
            if let productId = expectations.productId { claims.append("productId \(productId)") }
            if let transactionId = expectations.transactionId { claims.append("transactionId \(transactionId)") }
            if let maxAge = expectations.maxAge { claims.append("signed within \(Int(maxAge)) s") }
            if !nested.isEmpty { claims.append("nested data of the same app and environment") }
            return claims.joined(separator: ", ")
        default:
            return ""
        }
    }

    private static func iso(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
