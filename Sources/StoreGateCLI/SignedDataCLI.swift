// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (the JSON that `inspect` and `verify --json` print has snake_case keys, like Apple's verifyReceipt replies, spelled by these member names)

import Foundation
import StoreGateCore
import StoreGateSignedData
import X509

/// `inspect` and `verify` for StoreKit 2 JWS: signed transactions, renewal infos, app
/// transactions and App Store Server Notifications V2.
enum SignedDataCLI {
    // MARK: - inspect

    /// What `inspect` prints for a JWS: header, certificates, payload, and for notifications
    /// the nested signed data decoded the same way.
    struct Inspection: Encodable {
        struct Header: Encodable {
            let alg: String
            let kid: String?
            let typ: String?
            let x5c: [CertificateInfo]
        }

        struct CertificateInfo: Encodable {
            let subject: String
            let issuer: String
            let serial_number: String
            let not_valid_before: Date
            let not_valid_after: Date
            let sha256: String
        }

        let kind: String
        let header: Header
        let payload: UnverifiedSignedData.Payload
        let nested: [String: Inspection]?
    }

    static func inspect(compact: String) throws -> String {
        try Output.json(inspection(of: compact, kind: nil))
    }

    static func inspection(of compact: String, kind: ProofKind?) throws -> Inspection {
        let decoded = try UnverifiedSignedData(compact, kind: kind)
        var certificates: [Inspection.CertificateInfo] = []
        for string in decoded.jws.header.certificateChain {
            guard let der = Base64.decode(string, mode: .standard) else {
                throw CLIError("x5c holds a certificate that is not standard base64")
            }
            let candidate: CandidateCertificate
            do {
                candidate = try CandidateCertificate(der: der)
            } catch {
                throw CLIError("x5c holds a certificate that is not DER X.509: \(error.reason)")
            }
            let certificate = candidate.certificate
            certificates.append(.init(
                subject: certificate.subject.description,
                issuer: certificate.issuer.description,
                serial_number: Hex.encode(certificate.serialNumber.bytes),
                not_valid_before: certificate.notValidBefore,
                not_valid_after: certificate.notValidAfter,
                sha256: candidate.fingerprint.description
            ))
        }
        var nested: [String: Inspection] = [:]
        if case .notification(let notification) = decoded.payload {
            if let signed = notification.data?.signedTransactionInfo {
                nested["signedTransactionInfo"] = try inspection(of: signed, kind: .signedTransaction)
            }
            if let signed = notification.data?.signedRenewalInfo {
                nested["signedRenewalInfo"] = try inspection(of: signed, kind: .signedRenewalInfo)
            }
            if let signed = notification.appData?.signedAppTransactionInfo {
                nested["signedAppTransactionInfo"] = try inspection(of: signed, kind: .appTransaction)
            }
        }
        let header = decoded.jws.header
        return Inspection(
            kind: decoded.kind.rawValue,
            header: .init(alg: header.algorithm, kid: header.keyId, typ: header.type, x5c: certificates),
            payload: decoded.payload,
            nested: nested.isEmpty ? nil : nested
        )
    }

    // MARK: - verify

    /// What `verify --json` prints for a JWS: the verdict, each step, each expectation check,
    /// the chain, and the decoded payload whenever it decodes (`valid` says whether it was
    /// verified), with a notification's nested signed data.
    struct VerdictJSON: Encodable {
        struct Failure: Encodable {
            let step: String
            let code: String
            let field: String?
            let reason: String
        }

        struct Nested: Encodable {
            let environment: String
            let signing_time: Date
            let chain_cache_hit: Bool
            let payload: UnverifiedSignedData.Payload
        }

        let kind: String
        let valid: Bool
        let environment: String?
        let claimed_environment: String?
        let bundle_id: String?
        let signing_time: Date?
        let signing_time_source: String?
        let validation_time: Date?
        let anchor: String?
        let chain_cache_hit: Bool?
        let error: Failure?
        let steps: [VerificationStepReport]
        let checks: [ExpectationCheck]
        let chain: [ValidatedSigner.CertificateSummary]
        let payload: UnverifiedSignedData.Payload?
        let nested: [String: Nested]?

        init(_ report: SignedDataVerificationReport) {
            let details = report.details
            kind = report.kind.rawValue
            valid = report.isValid
            environment = details?.environment.rawValue
            claimed_environment = details?.claimedEnvironment.rawValue
            bundle_id = report.bundleId
            signing_time = report.signingTime
            signing_time_source = report.signingTimeSource?.rawValue
            validation_time = report.validationTime
            anchor = report.signer.map { $0.anchor == .apple ? "apple" : "opt-in" }
            chain_cache_hit = report.signer == nil ? nil : report.chainCacheHit
            error = report.failure.map { .init(step: $0.step.rawValue, code: $0.code.description, field: $0.field, reason: $0.reason) }
            steps = report.steps
            checks = report.checks
            chain = report.signer?.chain ?? []
            payload = report.payload
            let nested = report.nested.map { item in
                (String(item.member.split(separator: ".").last ?? ""), Nested(
                    environment: item.details.environment.rawValue, signing_time: item.details.signingTime,
                    chain_cache_hit: item.details.chainCacheHit, payload: item.payload))
            }
            self.nested = nested.isEmpty ? nil : Dictionary(nested, uniquingKeysWith: { first, _ in first })
        }
    }

    static func verify(compact: String, options: VerifyOptions) async throws -> Bool {
        let bytes = Array(compact.utf8)
        let kind = try kind(of: bytes, named: options.jwsKind)
        let verifier = SignedDataVerifier(
            expectations: SignedDataExpectations(
                bundleId: options.bundleId,
                environments: options.environments,
                appAppleId: options.appAppleId,
                maxAge: options.maxAge,
                productId: options.productId,
                transactionId: options.transactionId
            ),
            chainVerifier: CertificateChainVerifier(trustStore: options.trustStore),
            validationTime: options.validationTime.map { .fixed($0) } ?? .signingTime
        )
        let report = await verifier.report(bytes: bytes, as: kind)
        print(options.json ? try Output.json(VerdictJSON(report)) : render(report))
        return report.isValid
    }

    /// The kind named by `--kind`, or the one the payload's members reveal.
    static func kind(of bytes: [UInt8], named name: String?) throws -> ProofKind {
        if let name {
            switch name.lowercased() {
            case "transaction", "signed-transaction", "signed_transaction": return .signedTransaction
            case "renewal-info", "renewal", "signed-renewal-info", "signed_renewal_info": return .signedRenewalInfo
            case "app-transaction", "app_transaction": return .appTransaction
            case "notification": return .notification
            default: throw CLIError("--kind: '\(name)' is not transaction, renewal-info, app-transaction or notification")
            }
        }
        // Detection reads the unverified payload; a JWS too broken to decode is refused by
        // the verifier, whose report names the step and field at fault.
        return UnverifiedSignedData.detectedKind(bytes)
    }

    static func render(_ report: SignedDataVerificationReport) -> String {
        var lines = report.steps.map(Output.line)
        lines += report.checks.map(Output.line)
        if let failure = report.failure {
            lines.append("INVALID: \(failure.step): \(failure.code)\(failure.field.map { " [\($0)]" } ?? ""): \(failure.reason)")
        } else if let details = report.details {
            lines.append("VALID: \(report.kind.rawValue) signed \(details.signingTime.formatted(.iso8601)) in \(details.environment.rawValue)")
        }
        return lines.joined(separator: "\n")
    }
}
