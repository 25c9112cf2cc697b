public import Foundation
public import StoreGateCore

/// Every step of one receipt verification, for people: what passed, what failed, what did not run.
public struct ReceiptVerificationReport: Sendable {
    /// One step's outcome.
    public typealias Step = VerificationStepReport

    /// The first failure, or `nil` when the receipt is valid.
    public let failure: ReceiptError?
    /// Every expectation's result, in the order run (empty when an earlier step failed).
    public let checks: [ExpectationCheck]
    /// The decoded receipt, when the signature and chain held.
    public let receipt: AppReceipt?
    /// The environment reported, when the chain held.
    public let environment: AppStoreEnvironment?
    /// The validated chain, when it held.
    public let signer: ValidatedSigner?
    /// The signer's digest algorithm, once the signature step ran.
    public let digestAlgorithm: ReceiptDigestAlgorithm?
    /// The signer's signature algorithm, once the signature step ran.
    public let signatureAlgorithm: ReceiptSignatureAlgorithm?
    /// The time the chain was checked at, once the payload named it.
    public let validationTime: Date?
    /// The signing certificate's subject, once found.
    public let signerSubject: String?

    /// Whether the receipt is valid.
    public var isValid: Bool { failure == nil }

    /// The steps in order.
    public var steps: [Step] {
        VerificationStepReport.steps(
            [.input, .structure, .signer, .signature, .payload, .chain, .expectations],
            failedStep: failure?.step,
            failure: failure.map { "\($0.code)\($0.field.map { " [\($0)]" } ?? ""): \($0.reason)" } ?? "",
            passDetail: passDetail
        )
    }

    private func passDetail(_ step: VerificationStep) -> String {
        switch step {
        case .input: return "size within limits"
        case .structure: return "PKCS#7 SignedData over id-data"
        case .signer: return "signer \(signerSubject ?? "found")"
        case .signature:
            return "RSA PKCS#1 v1.5 with \(digestAlgorithm?.rawValue ?? "?") (\(signatureAlgorithm?.rawValue ?? "?"))"
        case .payload: return receipt.map { "\($0.inAppPurchases.count) in-app purchases, created \($0.creationDate)" } ?? "decoded"
        case .chain:
            guard let signer else { return "valid" }
            let anchor = signer.anchor == .apple ? "pinned Apple Root CA" : "opt-in anchor"
            let roles = signer.chain.count == 1 ? ["anchor"] : ["leaf", "intermediate", "root"]
            let links = zip(roles, signer.chain).map { role, certificate in "\(role) \(certificate.subject)" }.joined(separator: " → ")
            let fingerprint = signer.chain.last.map { ", SHA-256 \($0.sha256)" } ?? ""
            return "\(signer.chain.count) certificates to the \(anchor), valid at \(validationTime.map { "\($0)" } ?? "?"): \(links)\(fingerprint)"
        case .expectations: return "all expectations hold"
        }
    }

    init(failure: ReceiptError?, checks: [ExpectationCheck], signed: ReceiptVerifier.SignedReceipt?, progress: ReceiptVerifier.Progress) {
        self.failure = failure
        self.checks = checks
        self.receipt = signed?.receipt ?? progress.receipt
        self.environment = signed?.environment
        self.signer = signed?.signer
        self.digestAlgorithm = progress.digestAlgorithm
        self.signatureAlgorithm = progress.signatureAlgorithm
        self.validationTime = progress.validationTime
        self.signerSubject = progress.signerSubject
    }
}
