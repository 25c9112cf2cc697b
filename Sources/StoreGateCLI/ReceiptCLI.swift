// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (the JSON that `inspect` and `verify --json` print has snake_case keys, like Apple's verifyReceipt replies, spelled by these member names)

import Foundation
import StoreGateCore
import StoreGateReceipt
import X509
import SwiftASN1

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
        let receipt: VerifyReceiptReceipt
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
            receipt: VerifyReceiptReceipt(decoded.receipt),
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

    /// What `verify --json` prints for a receipt: the verdict, each step and expectation
    /// check, the chain, and the decoded receipt in Apple's verifyReceipt field names (as
    /// `inspect` prints it) whenever it decodes (`valid` says whether it was verified). With
    /// `--remote`, Apple's reply and the combined verdict are members of the same document.
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
        let receipt: VerifyReceiptReceipt?
        /// With `--remote`: Apple's verifyReceipt reply, checked and compared.
        var remote: RemoteVerifyCLI.RemoteJSON?
        /// With `--remote`: valid offline and remotely, and both agree.
        var overall_valid: Bool?

        init(_ report: ReceiptVerificationReport) {
            valid = report.isValid
            environment = report.environment?.rawValue
            bundle_id = report.receipt?.bundleId
            validation_time = report.validationTime
            error = report.failure.map { .init(step: $0.step.rawValue, code: $0.code.description, field: $0.field, reason: $0.reason) }
            steps = report.steps
            checks = report.checks
            chain = report.signer?.chain ?? []
            receipt = report.receipt.map { VerifyReceiptReceipt($0) }
        }
    }

    /// Verifies offline and reports every step (nothing printed).
    static func report(der: [UInt8], options: VerifyOptions) async -> ReceiptVerificationReport {
        let verifier = ReceiptVerifier(chainVerifier: CertificateChainVerifier(trustStore: options.trustStore))
        var expectations = ReceiptExpectations(bundleId: options.bundleId, environments: options.environments)
        expectations.appVersion = options.appVersion
        expectations.device = options.deviceId.flatMap { DeviceIdentifier(rawBytes: $0) }
        expectations.productId = options.productId
        expectations.transactionId = options.transactionId
        let time: ReceiptVerifier.ValidationTime = options.validationTime.map { .fixed($0) } ?? .signingTime
        return await verifier.report(der, expecting: expectations, at: time)
    }

    static func render(_ report: ReceiptVerificationReport) -> String {
        var lines = report.steps.map(Output.line)
        lines += report.checks.map(Output.line)
        if let failure = report.failure {
            lines.append("INVALID: \(failure.step): \(failure.code)\(failure.field.map { " [\($0)]" } ?? ""): \(failure.reason)")
        } else {
            lines.append("VALID: \(report.receipt?.bundleId ?? "") in \(report.environment?.rawValue ?? "?"), \(report.receipt?.inAppPurchases.count ?? 0) in-app purchases")
        }
        return lines.joined(separator: "\n")
    }
}
