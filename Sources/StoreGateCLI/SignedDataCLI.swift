import Foundation
import StoreGateCore
import StoreGateSignedData

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

    /// One verification step as `verify` reports it (the same shape as for receipts).
    struct Step: Encodable {
        enum Status: String, Encodable {
            case passed, failed, notRun = "not_run"
        }

        let step: VerificationStep
        let status: Status
        let detail: String
    }

    /// What `verify --json` prints for a JWS.
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
        let steps: [Step]
        let chain: [ValidatedSigner.CertificateSummary]
        let payload: UnverifiedSignedData.Payload?
        let nested: [String: Nested]?
    }

    /// The outcome of verifying one JWS of any kind.
    struct Outcome {
        var details: SignedDataDetails?
        var payload: UnverifiedSignedData.Payload?
        var nested: [String: VerdictJSON.Nested] = [:]
        var bundleId: String?
        /// A notification's verified nested transaction.
        var nestedTransaction: JWSTransactionDecodedPayload?
        var failure: SignedDataError?
    }

    static func verify(compact: String, options: VerifyOptions) async throws -> Bool {
        let bytes = Array(compact.utf8)
        let kind = try kind(of: bytes, named: options.jwsKind)
        let verifier = SignedDataVerifier(
            expectations: SignedDataExpectations(
                bundleId: options.bundleId,
                environments: options.environments,
                appAppleId: options.appAppleId,
                maxAge: options.maxAge
            ),
            chainVerifier: CertificateChainVerifier(trustStore: options.trustStore),
            validationTime: options.validationTime.map { .fixed($0) } ?? .signingTime
        )
        var outcome = await run(verifier, bytes, as: kind)
        if outcome.failure == nil {
            outcome.failure = checkPurchase(outcome.payload, nestedTransaction: outcome.nestedTransaction, options: options)
        }
        let steps = steps(for: outcome, bytes: bytes, kind: kind)
        if options.json {
            let details = outcome.details
            let verdict = VerdictJSON(
                kind: kind.rawValue,
                valid: outcome.failure == nil,
                environment: details?.environment.rawValue,
                claimed_environment: details?.claimedEnvironment.rawValue,
                bundle_id: outcome.bundleId,
                signing_time: details?.signingTime,
                signing_time_source: details?.signingTimeSource.rawValue,
                validation_time: details?.validationTime,
                anchor: details.map { $0.anchor == .apple ? "apple" : "opt-in" },
                chain_cache_hit: details?.chainCacheHit,
                error: outcome.failure.map { .init(step: $0.step.rawValue, code: $0.code.description, field: $0.field, reason: $0.reason) },
                steps: steps,
                chain: details?.chain ?? [],
                payload: outcome.failure == nil ? outcome.payload : nil,
                nested: outcome.failure == nil && !outcome.nested.isEmpty ? outcome.nested : nil
            )
            print(try Output.json(verdict))
        } else {
            print(render(steps, outcome: outcome, kind: kind))
        }
        return outcome.failure == nil
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
        // Detection reads the unverified payload. A JWS too broken to decode is not refused
        // here: the verifier refuses it and its report names the step and field at fault.
        do {
            return try UnverifiedSignedData(bytes: bytes).kind
        } catch {
            return .signedTransaction
        }
    }

    static func run(_ verifier: SignedDataVerifier, _ bytes: [UInt8], as kind: ProofKind) async -> Outcome {
        var outcome = Outcome()
        do throws(SignedDataError) {
            switch kind {
            case .signedRenewalInfo:
                let verified = try await verifier.verifyRenewalInfo(bytes: bytes)
                (outcome.details, outcome.payload) = (verified.details, .renewalInfo(verified.payload))
            case .appTransaction:
                let verified = try await verifier.verifyAppTransaction(bytes: bytes)
                (outcome.details, outcome.payload) = (verified.details, .appTransaction(verified.payload))
                outcome.bundleId = verified.payload.bundleId
            case .notification:
                let verified = try await verifier.verifyNotification(bytes: bytes)
                (outcome.details, outcome.payload) = (verified.details, .notification(verified.payload))
                outcome.bundleId = verified.payload.subject.bundleId
                outcome.nestedTransaction = verified.transaction?.payload
                if let nested = verified.transaction {
                    outcome.nested["signedTransactionInfo"] = .init(
                        environment: nested.environment.rawValue, signing_time: nested.details.signingTime,
                        chain_cache_hit: nested.details.chainCacheHit, payload: .transaction(nested.payload))
                }
                if let nested = verified.renewalInfo {
                    outcome.nested["signedRenewalInfo"] = .init(
                        environment: nested.environment.rawValue, signing_time: nested.details.signingTime,
                        chain_cache_hit: nested.details.chainCacheHit, payload: .renewalInfo(nested.payload))
                }
                if let nested = verified.appTransaction {
                    outcome.nested["signedAppTransactionInfo"] = .init(
                        environment: nested.environment.rawValue, signing_time: nested.details.signingTime,
                        chain_cache_hit: nested.details.chainCacheHit, payload: .appTransaction(nested.payload))
                }
            default:
                let verified = try await verifier.verifyTransaction(bytes: bytes)
                (outcome.details, outcome.payload) = (verified.details, .transaction(verified.payload))
                outcome.bundleId = verified.payload.bundleId
            }
        } catch {
            outcome.failure = error
        }
        return outcome
    }

    /// `--product-id` and `--transaction-id` against the (nested) transaction.
    static func checkPurchase(
        _ payload: UnverifiedSignedData.Payload?,
        nestedTransaction: JWSTransactionDecodedPayload?,
        options: VerifyOptions
    ) -> SignedDataError? {
        guard options.productId != nil || options.transactionId != nil else { return nil }
        var productIds: [String?] = []
        var transactionId: String?
        switch payload {
        case .transaction(let transaction)?:
            productIds = [transaction.productId]
            transactionId = transaction.transactionId
        case .renewalInfo(let renewal)?:
            productIds = [renewal.productId, renewal.autoRenewProductId]
        case .notification?:
            if let transaction = nestedTransaction {
                productIds = [transaction.productId]
                transactionId = transaction.transactionId
            }
        default:
            break
        }
        if let expected = options.productId, !productIds.contains(expected) {
            return SignedDataError(.expectations, .invalidField, field: "productId", reason: "the proof is not for product \(expected)")
        }
        if let expected = options.transactionId, transactionId != expected {
            return SignedDataError(.expectations, .invalidField, field: "transactionId", reason: "the proof is not transaction \(expected)")
        }
        return nil
    }

    static let order: [VerificationStep] = [.input, .structure, .signature, .payload, .chain, .expectations]

    static func steps(for outcome: Outcome, bytes: [UInt8], kind: ProofKind) -> [Step] {
        let failedIndex = outcome.failure.flatMap { failure in order.firstIndex(of: failure.step) }
        return order.enumerated().map { index, step in
            if let failedIndex {
                if index == failedIndex, let failure = outcome.failure {
                    return Step(step: step, status: .failed, detail: "\(failure.code)\(failure.field.map { " [\($0)]" } ?? ""): \(failure.reason)")
                }
                if index > failedIndex {
                    return Step(step: step, status: .notRun, detail: "")
                }
                switch step {
                case .input:
                    return Step(step: step, status: .passed, detail: "\(bytes.count) bytes")
                case .structure:
                    // The structure passed, so the header reads again.
                    do {
                        let header = try CompactJWS(bytes: bytes).header
                        return Step(step: step, status: .passed, detail: "alg \(header.algorithm), x5c of \(header.certificateChain.count)")
                    } catch {
                        return Step(step: step, status: .passed, detail: "")
                    }
                default:
                    return Step(step: step, status: .passed, detail: "")
                }
            }
            return Step(step: step, status: .passed, detail: detail(of: step, outcome: outcome, bytes: bytes, kind: kind))
        }
    }

    static func detail(of step: VerificationStep, outcome: Outcome, bytes: [UInt8], kind: ProofKind) -> String {
        guard let details = outcome.details else { return "" }
        switch step {
        case .input:
            return "\(bytes.count) bytes"
        case .structure:
            return "alg ES256, x5c of \(details.header.certificateChain.count)\(details.header.keyId.map { ", kid \($0)" } ?? "")"
        case .signature:
            return "ECDSA P-256 over header.payload with the key of x5c[0]"
        case .payload:
            let nested = outcome.nested.keys.sorted()
            return kind.rawValue + (nested.isEmpty ? "" : " with " + nested.joined(separator: ", ") + " (each verified)")
        case .chain:
            let anchor = details.anchor == .apple ? "pinned Apple Root CA - G3" : "opt-in anchor"
            let cached = details.chainCacheHit ? ", from the chain cache" : ""
            return "\(details.chain.count) certificate(s) to the \(anchor), valid at \(iso(details.validationTime)) (\(details.signingTimeSource.rawValue))\(cached)"
        case .expectations:
            var text = "environment \(details.environment.rawValue)"
            if details.environment != details.claimedEnvironment { text += " (claims \(details.claimedEnvironment.rawValue))" }
            if let bundleId = outcome.bundleId { text = "bundle id \(bundleId), " + text }
            return text
        default:
            return ""
        }
    }

    static func render(_ steps: [Step], outcome: Outcome, kind: ProofKind) -> String {
        var lines: [String] = []
        for step in steps {
            let mark: String
            switch step.status {
            case .passed: mark = "PASS"
            case .failed: mark = "FAIL"
            case .notRun: mark = "----"
            }
            lines.append("\(mark)  \(step.step.rawValue.padding(toLength: 13, withPad: " ", startingAt: 0))\(step.detail)")
        }
        if let failure = outcome.failure {
            lines.append("INVALID: \(failure.step): \(failure.code)\(failure.field.map { " [\($0)]" } ?? ""): \(failure.reason)")
        } else if let details = outcome.details {
            lines.append("VALID: \(kind.rawValue) signed \(iso(details.signingTime)) in \(details.environment.rawValue)")
        }
        return lines.joined(separator: "\n")
    }

    static func iso(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
