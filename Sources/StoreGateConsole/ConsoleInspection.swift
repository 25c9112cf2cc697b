import Foundation
import StoreGateCore
import StoreGateReceipt
import StoreGateSignedData

extension ConsoleViews {
    /// One verification, for the inspector and a stored proof's page: the verdict, every step
    /// with PASS/FAIL/— and its detail, each expectation, the certificate chain and the decoded
    /// fields in Apple's names. Never the proof itself.
    struct Inspection: Sendable {
        struct Step: Sendable {
            let name: String
            let status: String
            let tone: String
            let detail: String
        }

        struct Certificate: Sendable {
            let role: String
            let subject: String
            let issuer: String
            let serial: String
            let validity: String
            let sha256: String
        }

        let kind: String
        let valid: Bool
        let verdict: String
        let summary: String
        let steps: [Step]
        let checks: [Step]
        let chain: [Certificate]
        let unverifiedSubjects: [String]
        let unverifiedHeading: String
        let decoded: String
        // Stored, not computed: Mustache reads values through Mirror.
        let hasChecks: Bool
        let hasChain: Bool
        let hasUnverifiedSubjects: Bool
        let hasDecoded: Bool

        init(
            kind: String, valid: Bool, verdict: String, summary: String, steps: [Step], checks: [Step], chain: [Certificate],
            unverifiedSubjects: [String], decoded: String
        ) {
            self.kind = kind
            self.valid = valid
            self.verdict = verdict
            self.summary = summary
            self.steps = steps
            self.checks = checks
            self.chain = chain
            self.unverifiedSubjects = unverifiedSubjects
            unverifiedHeading = unverifiedSubjects.count == 1 ? "Signer (not validated)" : "Certificates presented (not validated)"
            self.decoded = decoded
            hasChecks = !checks.isEmpty
            hasChain = !chain.isEmpty
            hasUnverifiedSubjects = chain.isEmpty && !unverifiedSubjects.isEmpty
            hasDecoded = !decoded.isEmpty
        }
    }

    static func inspection(_ result: ProofInspection) -> Inspection {
        switch result {
        case .receipt(let report):
            let summary: String
            if let failure = report.failure {
                summary = "\(failure.step): \(failure.code)\(failure.field.map { " [\($0)]" } ?? ""): \(failure.reason)"
            } else {
                summary = "\(report.receipt?.bundleId ?? "") in \(report.environment?.rawValue ?? "?"), \(report.receipt?.inAppPurchases.count ?? 0) in-app purchases"
            }
            return Inspection(
                kind: "app receipt (PKCS#7)", valid: report.isValid, verdict: report.isValid ? "VALID" : "INVALID", summary: summary,
                steps: report.steps.map(step), checks: report.checks.map(check), chain: chain(report.signer?.chain ?? []),
                unverifiedSubjects: report.signerSubject.map { [$0] } ?? [],
                decoded: report.receipt.map { json(VerifyReceiptReceipt($0)) } ?? ""
            )
        case .signedData(let report):
            let summary: String
            if let failure = report.failure {
                summary = "\(failure.step): \(failure.code)\(failure.field.map { " [\($0)]" } ?? ""): \(failure.reason)"
            } else {
                summary = "\(report.kind.rawValue) signed \(time(report.details?.signingTime)) in \(report.details?.environment.rawValue ?? "?")"
            }
            return Inspection(
                kind: "StoreKit 2 JWS (\(report.kind.rawValue))", valid: report.isValid, verdict: report.isValid ? "VALID" : "INVALID",
                summary: summary, steps: report.steps.map(step), checks: report.checks.map(check), chain: chain(report.signer?.chain ?? []),
                unverifiedSubjects: report.certificateSubjects, decoded: report.payload.map { json($0) } ?? ""
            )
        case .unreadable(let step, let code, let reason):
            return Inspection(
                kind: "unreadable input", valid: false, verdict: "INVALID", summary: "\(step): \(code): \(reason)",
                steps: [Inspection.Step(name: step, status: "FAIL", tone: "bad", detail: "\(code): \(reason)")],
                checks: [], chain: [], unverifiedSubjects: [], decoded: ""
            )
        }
    }

    private static func step(_ step: VerificationStepReport) -> Inspection.Step {
        switch step.status {
        case .passed: return .init(name: step.step.rawValue, status: "PASS", tone: "good", detail: step.detail)
        case .failed: return .init(name: step.step.rawValue, status: "FAIL", tone: "bad", detail: step.detail)
        case .notRun: return .init(name: step.step.rawValue, status: "not run", tone: "neutral", detail: "")
        }
    }

    private static func check(_ check: ExpectationCheck) -> Inspection.Step {
        switch check.passed {
        case true?: return .init(name: check.name, status: "PASS", tone: "good", detail: check.detail)
        case false?: return .init(name: check.name, status: "FAIL", tone: "bad", detail: check.detail)
        case nil: return .init(name: check.name, status: "not checked", tone: "neutral", detail: check.detail)
        }
    }

    private static func chain(_ certificates: [ValidatedSigner.CertificateSummary]) -> [Inspection.Certificate] {
        let roles = certificates.count == 1 ? ["anchor"] : ["leaf", "intermediate", "root"] + Array(repeating: "", count: max(0, certificates.count - 3))
        return zip(roles, certificates).map { role, certificate in
            Inspection.Certificate(
                role: role, subject: certificate.subject, issuer: certificate.issuer, serial: certificate.serialNumber,
                validity: "\(time(certificate.notValidBefore)) – \(time(certificate.notValidAfter))", sha256: certificate.sha256
            )
        }
    }

    /// Pretty, sorted JSON of a decoded payload (Apple's member names).
    static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(value) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }
}
