import Foundation
import StoreGateCore
import StoreGateReceipt
import X509

/// `inspect` and `verify` for app receipts.
enum ReceiptCLI {
    /// What `inspect` prints for a receipt.
    struct Inspection: Encodable {
        struct Signature: Encodable {
            let digest_algorithm: String?
            let signature_algorithm: String?
            let signed_attributes: Bool
        }

        struct CertificateInfo: Encodable {
            let subject: String
            let issuer: String
            let serial_number: String
            let not_valid_before: Date
            let not_valid_after: Date
            let sha256: String
        }

        struct Attribute: Encodable {
            let type: Int
            let version: Int
            let value_hex: String
        }

        let kind = "app_receipt"
        let receipt: AppleReceiptJSON
        let opaque_value: String
        let sha1_hash: String
        let unknown_attributes: [Attribute]
        let signature: Signature
        let certificates: [CertificateInfo]
    }

    static func inspect(der: [UInt8]) throws -> String {
        let decoded = try UnverifiedReceipt(der: der)
        var certificates: [Inspection.CertificateInfo] = []
        for bytes in decoded.certificates {
            let certificate = try Certificate(derEncoded: bytes)
            certificates.append(.init(
                subject: certificate.subject.description,
                issuer: certificate.issuer.description,
                serial_number: Hex.encode(certificate.serialNumber.bytes),
                not_valid_before: certificate.notValidBefore,
                not_valid_after: certificate.notValidAfter,
                sha256: Fingerprint(of: bytes).description
            ))
        }
        let inspection = Inspection(
            receipt: decoded.receipt.appleJSON(),
            opaque_value: Base64.encode(decoded.receipt.opaqueValue),
            sha1_hash: Base64.encode(decoded.receipt.sha1Hash),
            unknown_attributes: decoded.receipt.unknownAttributes.map { .init(type: $0.type, version: $0.version, value_hex: Hex.encode($0.value)) },
            signature: .init(
                digest_algorithm: decoded.digestAlgorithm?.rawValue,
                signature_algorithm: decoded.signatureAlgorithm?.rawValue,
                signed_attributes: decoded.hasSignedAttributes
            ),
            certificates: certificates
        )
        return try Output.json(inspection)
    }

    /// What `verify --json` prints for a receipt.
    struct VerdictJSON: Encodable {
        struct Failure: Encodable {
            let step: String
            let code: String
            let field: String?
            let reason: String
        }

        let kind = "app_receipt"
        let valid: Bool
        let environment: String?
        let bundle_id: String?
        let validation_time: Date?
        let error: Failure?
        let steps: [ReceiptVerificationReport.Step]
        let checks: [ExpectationCheck]
        let chain: [ValidatedSigner.CertificateSummary]
    }

    static func verify(der: [UInt8], options: VerifyOptions) async throws -> Bool {
        let verifier = ReceiptVerifier(chainVerifier: CertificateChainVerifier(trustStore: options.trustStore))
        var expectations = ReceiptExpectations(bundleId: options.bundleId, environments: options.environments)
        expectations.appVersion = options.appVersion
        expectations.device = options.deviceId.flatMap { DeviceIdentifier(rawBytes: $0) }
        expectations.productId = options.productId
        expectations.transactionId = options.transactionId
        let time: ReceiptVerifier.ValidationTime = options.validationTime.map { .fixed($0) } ?? .signingTime
        let report = await verifier.report(der, expecting: expectations, at: time)

        if options.json {
            let verdict = VerdictJSON(
                valid: report.isValid,
                environment: report.environment?.rawValue,
                bundle_id: report.receipt?.bundleId,
                validation_time: report.validationTime,
                error: report.failure.map { .init(step: $0.step.rawValue, code: $0.code.description, field: $0.field, reason: $0.reason) },
                steps: report.steps,
                checks: report.checks,
                chain: report.signer?.chain ?? []
            )
            print(try Output.json(verdict))
        } else {
            print(render(report))
        }
        return report.isValid
    }

    static func render(_ report: ReceiptVerificationReport) -> String {
        var lines: [String] = []
        for step in report.steps {
            let mark: String
            switch step.status {
            case .passed: mark = "PASS"
            case .failed: mark = "FAIL"
            case .notRun: mark = "----"
            }
            lines.append("\(mark)  \(step.step.rawValue.padding(toLength: 13, withPad: " ", startingAt: 0))\(step.detail)")
        }
        for check in report.checks {
            let mark = check.passed.map { $0 ? "pass" : "FAIL" } ?? "skip"
            lines.append("        \(mark)  \(check.name.padding(toLength: 19, withPad: " ", startingAt: 0))\(check.detail)")
        }
        if let failure = report.failure {
            lines.append("INVALID: \(failure.step): \(failure.code)\(failure.field.map { " [\($0)]" } ?? ""): \(failure.reason)")
        } else {
            lines.append("VALID: \(report.receipt?.bundleId ?? "") in \(report.environment?.rawValue ?? "?"), \(report.receipt?.inAppPurchases.count ?? 0) in-app purchases")
        }
        return lines.joined(separator: "\n")
    }
}
