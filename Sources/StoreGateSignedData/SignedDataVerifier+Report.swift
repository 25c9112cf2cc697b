import Foundation
public import StoreGateCore

extension SignedDataVerifier {
    /// What the steps before a failure established, kept for a report.
    ///
    /// `@unchecked Sendable`: one verification writes it and then its caller reads it, in the
    /// same task; it is never shared between tasks.
    final class Trace: @unchecked Sendable {
        private(set) var authentication: Authentication?
        private(set) var signingTime: Date?
        private(set) var signingTimeSource: SignedDataDetails.SigningTimeSource?
        var nested: Nested?
        /// Every expectation's result, once the expectations ran.
        var checks: [ExpectationCheck] = []

        func record(_ authentication: Authentication, signingTime: Date, source: SignedDataDetails.SigningTimeSource) {
            self.authentication = authentication
            self.signingTime = signingTime
            self.signingTimeSource = source
        }
    }

    /// Verifies a JWS of `kind` and reports every step, with what each checked, rather than
    /// only the first failure (what `storegate verify` prints). The verdict is exactly the one
    /// the `verify…` function of that kind gives.
    ///
    /// - Parameters:
    ///   - bytes: The compact JWS.
    ///   - kind: What it is (`ProofKind.signedTransaction`,
    ///     `ProofKind.signedRenewalInfo`, `ProofKind.appTransaction`
    ///     or `ProofKind.notification`).
    ///   - expectations: What it must satisfy; the verifier's own when `nil`.
    public func report(bytes: [UInt8], as kind: ProofKind, expecting expectations: SignedDataExpectations? = nil) async -> SignedDataVerificationReport {
        let verifier = expecting(expectations)
        let trace = Trace()
        var report = SignedDataVerificationReport(kind: kind, size: bytes.count, expectations: verifier.expectations, limits: limits)
        do throws(SignedDataError) {
            switch try await verifier.verify(bytes: bytes, as: kind, trace: trace) {
            case .transaction(let verified):
                report.verified(verified.details, .transaction(verified.payload), bundleId: verified.payload.bundleId)
            case .renewalInfo(let verified):
                report.verified(verified.details, .renewalInfo(verified.payload), bundleId: nil)
            case .appTransaction(let verified):
                report.verified(verified.details, .appTransaction(verified.payload), bundleId: verified.payload.bundleId)
            case .notification(let verified):
                report.verified(verified.details, .notification(verified.payload), bundleId: verified.payload.subject.bundleId)
            }
        } catch {
            report.failure = error
        }
        report.read(bytes, limits: limits)
        if let authentication = trace.authentication, let time = trace.signingTime, let source = trace.signingTimeSource {
            report.authenticated(authentication.signer, validationTime: authentication.validationTime, signingTime: time, source: source, cacheHit: authentication.cacheHit)
        }
        report.checks = trace.checks
        if let nested = trace.nested {
            report.nested = SignedDataVerificationReport.NestedReport.all(nested)
        }
        return report
    }
}
