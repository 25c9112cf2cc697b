import Crypto
import Foundation
import StoreGateCore

/// The steps every JWS goes through: structure and payload (``open(_:decode:)``), chain and
/// signature (``authenticate(_:signingTime:)``), expectations.
extension SignedDataVerifier {
    /// What the chain and signature steps established.
    struct Authentication {
        let signer: ValidatedSigner
        let validationTime: Date
        let cacheHit: Bool
    }

    /// Input, structure and payload: splits the JWS, checks its header and decodes its payload.
    func open<Payload>(
        _ bytes: [UInt8],
        decode: (JSONObject) throws(SignedDataError) -> Payload
    ) throws(SignedDataError) -> (CompactJWS, Payload) {
        let jws = try CompactJWS(bytes: bytes, limits: limits)
        let count = jws.header.certificateChain.count
        guard count == 3 || count == 1 else {
            throw SignedDataError(
                .structure, .wrongCertificateCount, field: "header.x5c",
                reason: "x5c holds \(count) certificates; Apple's chains have 3 (leaf, intermediate, root)")
        }
        let object = try jws.payloadObject()
        return (jws, try decode(object))
    }

    /// Chain and signature: validates the `x5c` chain at the validation time (from the cache
    /// when it can), then checks the ES256 signature with the leaf's key.
    func authenticate(_ jws: CompactJWS, signingTime: Date) async throws(SignedDataError) -> Authentication {
        let time: Date
        switch validationTime {
        case .signingTime: time = signingTime
        case .now: time = clock()
        case .fixed(let date): time = date
        }
        let strings = jws.header.certificateChain
        let key = ChainCacheKey(policy: .signedData, material: strings.map { Array($0.utf8)[...] })
        let signer: ValidatedSigner
        let cacheHit: Bool
        if let cached = chainVerifier.cachedSigner(for: key, at: time) {
            signer = cached
            cacheHit = true
        } else {
            signer = try await validateChain(strings, at: time, cacheKey: key)
            cacheHit = false
        }
        try Self.checkSignature(jws, with: signer)
        return Authentication(signer: signer, validationTime: time, cacheHit: cacheHit)
    }

    /// The cold path: decodes and parses the certificates and validates them.
    private func validateChain(_ strings: [String], at time: Date, cacheKey: ChainCacheKey) async throws(SignedDataError) -> ValidatedSigner {
        var certificates: [CandidateCertificate] = []
        certificates.reserveCapacity(strings.count)
        for (index, string) in strings.enumerated() {
            guard let der = Base64.decode(string, mode: .standard) else {
                throw SignedDataError(.chain, .chain(.malformedCertificate), field: "header.x5c[\(index)]", reason: "not standard base64")
            }
            do throws(ChainError) {
                certificates.append(try CandidateCertificate(der: der))
            } catch {
                throw SignedDataError(chain: error, field: "header.x5c[\(index)]")
            }
        }
        if certificates.count == 1, !chainVerifier.trustStore.isOptInAnchor(certificates[0].fingerprint) {
            throw SignedDataError(
                .chain, .chain(.untrustedRoot), field: "header.x5c",
                reason: "a lone certificate is trusted only when it is an enabled opt-in anchor (Xcode's StoreKit Testing certificate)")
        }
        do throws(ChainError) {
            return try await chainVerifier.validate(
                CandidateChain(certificates: certificates, leafIndex: 0, mustBeOrdered: true),
                at: time,
                policy: .signedData,
                cacheKey: cacheKey
            )
        } catch {
            throw SignedDataError(chain: error, field: "header.x5c")
        }
    }

    /// ES256: ECDSA P-256 with SHA-256 over `header.payload`, signature as raw `r‖s`.
    private static func checkSignature(_ jws: CompactJWS, with signer: ValidatedSigner) throws(SignedDataError) {
        guard jws.signature.count == 64 else {
            throw SignedDataError(
                .signature, .malformedSignature, field: "signature",
                reason: "\(jws.signature.count) signature bytes; ES256 signatures are raw 64-byte r‖s (DER is refused)")
        }
        guard let key = signer.p256PublicKey else {
            throw SignedDataError(.signature, .unsupportedKey, field: "header.x5c[0]", reason: "the leaf certificate's key is not P-256")
        }
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try P256.Signing.ECDSASignature(rawRepresentation: jws.signature)
        } catch {
            throw SignedDataError(.signature, .malformedSignature, field: "signature", reason: "not a raw P-256 signature")
        }
        guard key.isValidSignature(signature, for: jws.signingInput) else {
            throw SignedDataError(.signature, .invalidSignature, field: "signature", reason: "the signature does not verify with the leaf certificate's key")
        }
    }

    // MARK: - Expectations

    static func required<T>(_ value: T?, _ field: String) throws(SignedDataError) -> T {
        guard let value else {
            throw SignedDataError(.payload, .missingField, field: field, reason: "the payload has no \(field)")
        }
        return value
    }

    func expectBundleId(_ bundleId: String?, field: String = "bundleId") throws(SignedDataError) {
        guard let bundleId else {
            throw SignedDataError(.expectations, .bundleIdMismatch, field: field, reason: "the payload names no bundle id")
        }
        guard bundleId == expectations.bundleId else {
            throw SignedDataError(.expectations, .bundleIdMismatch, field: field, reason: "signed for bundle \(bundleId), not \(expectations.bundleId)")
        }
    }

    /// The environment to report, after checking it is accepted.
    func expectEnvironment(
        _ claimed: Environment?,
        _ authentication: Authentication,
        field: String = "environment"
    ) throws(SignedDataError) -> (claimed: Environment, reported: Environment) {
        guard let claimed else {
            throw SignedDataError(.expectations, .environmentNotAccepted, field: field, reason: "the payload names no environment")
        }
        let reported = authentication.signer.reportedEnvironment(claimed: claimed)
        guard expectations.environments.contains(reported) else {
            let accepted = expectations.environments.map(\.rawValue).sorted().joined(separator: ", ")
            let shown = reported == claimed ? reported.rawValue : "\(reported.rawValue) (claims \(claimed.rawValue))"
            throw SignedDataError(.expectations, .environmentNotAccepted, field: field, reason: "environment \(shown) is not accepted (\(accepted))")
        }
        return (claimed, reported)
    }

    func expectAppAppleId(_ appAppleId: Int64?, environment: (claimed: Environment, reported: Environment), field: String) throws(SignedDataError) {
        if environment.reported == .production {
            guard let expected = expectations.appAppleId else {
                throw SignedDataError(.expectations, .appAppleIdRequired, field: field, reason: "production data names the app by appAppleId; the expectations name none")
            }
            guard appAppleId == expected else {
                throw SignedDataError(.expectations, .appAppleIdMismatch, field: field, reason: "signed for app \(appAppleId.map(String.init) ?? "(none)"), not \(expected)")
            }
        } else if let expected = expectations.appAppleId, let appAppleId, appAppleId != expected {
            throw SignedDataError(.expectations, .appAppleIdMismatch, field: field, reason: "signed for app \(appAppleId), not \(expected)")
        }
    }

    /// Checks the maximum age; `signedDate` is `nil` when nothing in the payload dates it.
    func expectAge(_ signedDate: Date?) throws(SignedDataError) {
        guard let maxAge = expectations.maxAge else { return }
        guard let signedDate else {
            throw SignedDataError(.expectations, .signedDateMissing, field: "signedDate", reason: "a maximum age is set but the payload has no signedDate")
        }
        let age = clock().timeIntervalSince(signedDate)
        guard age <= maxAge else {
            throw SignedDataError(.expectations, .signedDateTooOld, field: "signedDate", reason: "signed \(Int(age)) s ago; the maximum age is \(Int(maxAge)) s")
        }
    }

    func details(
        _ kind: ProofKind,
        _ jws: CompactJWS,
        _ environment: (claimed: Environment, reported: Environment),
        _ authentication: Authentication,
        _ signingTime: Date,
        _ source: SignedDataDetails.SigningTimeSource
    ) -> SignedDataDetails {
        SignedDataDetails(
            kind: kind,
            header: jws.header,
            claimedEnvironment: environment.claimed,
            environment: environment.reported,
            signingTime: signingTime,
            signingTimeSource: source,
            validationTime: authentication.validationTime,
            anchor: authentication.signer.anchor,
            chain: authentication.signer.chain,
            chainCacheHit: authentication.cacheHit
        )
    }
}
