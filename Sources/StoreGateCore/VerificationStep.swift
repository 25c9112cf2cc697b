/// The steps of verifying a proof, in the order they run. Every error names its step.
public enum VerificationStep: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// Reading the input: size limit, base64, the outer encoding.
    case input
    /// The container: PKCS#7 SignedData, or the JWS header and parts.
    case structure
    /// Finding the signing certificate among the embedded ones.
    case signer
    /// The cryptographic signature over the content.
    case signature
    /// Decoding the signed content: receipt attributes, JSON payload (it names the signing
    /// time the chain is checked at, so it runs before the chain, after the signature).
    case payload
    /// The certificate chain to a pinned Apple root or an opt-in anchor, at the signing time.
    case chain
    /// The caller's expectations: bundle id, version, environment, device, product.
    case expectations

    public var description: String { rawValue }
}

/// One step of a verification report: whether it passed, failed or did not run, and what it
/// checked. Receipt and JWS reports share it, so `storegate verify` prints both alike.
public struct VerificationStepReport: Sendable, Hashable, Codable {
    /// How the step ended.
    public enum Status: String, Sendable, Hashable, Codable {
        case passed, failed, notRun = "not_run"
    }

    /// The step.
    public let step: VerificationStep
    /// How it ended.
    public let status: Status
    /// What it checked and with what (passed), or the error's code, field and reason (failed).
    public let detail: String

    public init(step: VerificationStep, status: Status, detail: String) {
        self.step = step
        self.status = status
        self.detail = detail
    }

    /// The steps of `order`: those before the failed one passed (with `passDetail`), the
    /// failed one carries `failure`, the rest did not run. Without a failure all passed.
    public static func steps(
        _ order: [VerificationStep],
        failedStep: VerificationStep?,
        failure: String,
        passDetail: (VerificationStep) -> String
    ) -> [VerificationStepReport] {
        let failedIndex = failedStep.flatMap { order.firstIndex(of: $0) } ?? order.count
        return order.enumerated().map { index, step in
            if index < failedIndex {
                return VerificationStepReport(step: step, status: .passed, detail: passDetail(step))
            } else if index == failedIndex {
                return VerificationStepReport(step: step, status: .failed, detail: failure)
            }
            return VerificationStepReport(step: step, status: .notRun, detail: "")
        }
    }
}
