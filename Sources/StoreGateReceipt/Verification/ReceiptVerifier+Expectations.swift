import Crypto
public import Foundation
public import StoreGateCore

extension ReceiptVerifier {
    /// Every expectation's result, and the first failure among them.
    struct ExpectationOutcome {
        var results: [ExpectationCheck] = []
        var failure: ReceiptError?

        mutating func record(_ name: String, passed: Bool?, detail: String, failure error: @autoclosure () -> ReceiptError) {
            results.append(ExpectationCheck(name: name, passed: passed, detail: detail))
            if passed == false, failure == nil {
                failure = error()
            }
        }
    }

    /// Checks a decoded, signature- and chain-verified receipt against the expectations.
    func checkExpectations(_ receipt: AppReceipt, environment: AppStoreEnvironment, _ expectations: ReceiptExpectations) -> ExpectationOutcome {
        var outcome = ExpectationOutcome()
        let accepted = expectations.environments.map(\.rawValue).sorted().joined(separator: ", ")
        outcome.record(
            "environment",
            passed: expectations.environments.contains(environment),
            detail: "\(environment) (accepted: \(accepted))",
            failure: ReceiptError(.environmentNotAccepted, field: ReceiptField.receiptType.label, reason: "environment \(environment) is not accepted (\(accepted))")
        )
        outcome.record(
            "bundle_id",
            passed: receipt.bundleId == expectations.bundleId,
            detail: receipt.bundleId,
            failure: ReceiptError(.bundleIdMismatch, field: ReceiptField.bundleId.label, reason: "the receipt is for \(receipt.bundleId), not \(expectations.bundleId)")
        )
        if let version = expectations.appVersion {
            let inSet = expectations.acceptedAppVersions.isEmpty || expectations.acceptedAppVersions.contains(version)
            outcome.record(
                "app_version",
                passed: receipt.appVersion == version && inSet,
                detail: receipt.appVersion,
                failure: ReceiptError(.appVersionMismatch, field: ReceiptField.appVersion.label, reason: "the receipt names version \(receipt.appVersion), not \(version)")
            )
        } else if !expectations.acceptedAppVersions.isEmpty {
            let accepted = expectations.acceptedAppVersions.sorted().joined(separator: ", ")
            outcome.record(
                "app_version",
                passed: expectations.acceptedAppVersions.contains(receipt.appVersion),
                detail: "\(receipt.appVersion) (accepted: \(accepted))",
                failure: ReceiptError(.appVersionMismatch, field: ReceiptField.appVersion.label, reason: "the receipt names app version \(receipt.appVersion), which is not accepted")
            )
        } else {
            outcome.record("app_version", passed: nil, detail: "\(receipt.appVersion) (not checked)", failure: ReceiptError(.appVersionMismatch, reason: ""))
        }
        if let device = expectations.device {
            let computed = Array(Insecure.SHA1.hash(data: device.bytes + receipt.opaqueValue + receipt.bundleIdData))
            outcome.record(
                "device_hash",
                passed: computed == receipt.sha1Hash,
                detail: computed == receipt.sha1Hash ? "matches this device" : "issued to another device",
                failure: ReceiptError(.deviceHashMismatch, field: ReceiptField.sha1Hash.label, reason: "the receipt was not issued to this device")
            )
        } else {
            outcome.record("device_hash", passed: nil, detail: "not checked (no device id given)", failure: ReceiptError(.deviceHashMismatch, reason: ""))
        }
        if expectations.rejectsExpiredReceipt, let expiration = receipt.expirationDate {
            let now = now()
            outcome.record(
                "receipt_expiration",
                passed: expiration > now,
                detail: "expires \(expiration)",
                failure: ReceiptError(.receiptExpired, field: ReceiptField.expirationDate.label, reason: "the receipt expired at \(expiration)")
            )
        } else {
            outcome.record("receipt_expiration", passed: nil, detail: receipt.expirationDate.map { "expires \($0) (not checked)" } ?? "no expiration date", failure: ReceiptError(.receiptExpired, reason: ""))
        }
        if let transactionId = expectations.transactionId {
            let entry = receipt.inAppPurchases.first { $0.transactionId == transactionId }
            outcome.record(
                "transaction",
                passed: entry != nil,
                detail: entry.map { "\(transactionId) (\($0.productId))" } ?? "\(transactionId) not in the receipt",
                failure: ReceiptError(.transactionNotFound, field: ReceiptField.transactionId.label, reason: "the receipt does not contain transaction \(transactionId)")
            )
            if let productId = expectations.productId, let entry {
                outcome.record(
                    "product",
                    passed: entry.productId == productId,
                    detail: entry.productId,
                    failure: ReceiptError(.productNotFound, field: ReceiptField.productId.label, reason: "transaction \(transactionId) is for \(entry.productId), not \(productId)")
                )
            }
        } else if let productId = expectations.productId {
            let found = receipt.inAppPurchases.contains { $0.productId == productId }
            outcome.record(
                "product",
                passed: found,
                detail: found ? productId : "\(productId) not in the receipt",
                failure: ReceiptError(.productNotFound, field: ReceiptField.productId.label, reason: "the receipt does not contain product \(productId)")
            )
        }
        return outcome
    }
}

/// Every step of one receipt verification, for people: what passed, what failed, what did not run.
public struct ReceiptVerificationReport: Sendable {
    /// One step's outcome.
    public typealias Step = VerificationStepReport

    /// The first failure, or `nil` when the receipt is valid.
    public let failure: ReceiptError?
    /// The expectation checks (empty when an earlier step failed).
    public let checks: [ExpectationCheck]
    /// The decoded receipt, when the signature and chain held.
    public let receipt: AppReceipt?
    /// The environment reported, when the chain held.
    public let environment: AppStoreEnvironment?
    /// The validated chain, when it held.
    public let signer: ValidatedSigner?
    public let digestAlgorithm: ReceiptDigestAlgorithm?
    public let signatureAlgorithm: ReceiptSignatureAlgorithm?
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
