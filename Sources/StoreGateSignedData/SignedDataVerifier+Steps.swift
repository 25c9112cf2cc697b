import Crypto
import Foundation
import StoreGateCore
import X509

/// The steps every JWS goes through, in the order of `VerificationStep`:
/// input and structure (``parse(_:)``), signature (``checkSignature(_:)``), payload (the
/// caller decodes it), chain (``validateChain(_:_:signingTime:)``), expectations
/// (``expect(_:trace:)``, over the claims the caller builds from its payload).
extension SignedDataVerifier {
    /// What the signature step established: the signature verifies with the key of `x5c[0]`.
    struct Signed {
        /// The chain-cache key: the raw `x5c` strings.
        let cacheKey: ChainCacheKey
        /// The cached chain whose leaf key verified the signature, when the chain was cached.
        let cached: ValidatedSigner?
        /// The parsed certificates, when the chain was not cached.
        let certificates: [CandidateCertificate]?
    }

    /// What the chain step established.
    struct Authentication {
        let signer: ValidatedSigner
        let validationTime: Date
        let cacheHit: Bool
    }

    /// Input and structure: splits the JWS and checks its header, including the number of
    /// certificates (three, or one that must turn out to be an opt-in anchor).
    func parse(_ bytes: [UInt8]) throws(SignedDataError) -> CompactJWS {
        let jws = try CompactJWS(bytes: bytes, limits: limits, headers: headerMemo)
        let count = jws.header.certificateChain.count
        guard count == 3 || count == 1 else {
            throw SignedDataError(.wrongCertificateCount, field: "header.x5c",
                reason: "x5c holds \(count) certificates; Apple's chains have 3 (leaf, intermediate, root)")
        }
        return jws
    }

    /// Structure, signature and payload: everything before the chain.
    func open<Payload>(
        _ bytes: [UInt8],
        decode: (JSONObject) throws(SignedDataError) -> Payload
    ) throws(SignedDataError) -> (CompactJWS, Signed, Payload) {
        let jws = try parse(bytes)
        let signed = try checkSignature(jws)
        let object = try jws.payloadObject()
        return (jws, signed, try decode(object))
    }

    /// Signature: ES256 (ECDSA P-256 with SHA-256) over `header.payload`, as raw `r‖s`, with
    /// the key of `x5c[0]` — taken from the chain cache when these exact `x5c` strings were
    /// validated before, otherwise from the parsed leaf certificate. Whether that key is
    /// trustworthy is the chain step's question.
    func checkSignature(_ jws: CompactJWS) throws(SignedDataError) -> Signed {
        let strings = jws.header.certificateChain
        let cacheKey = ChainCacheKey(policy: .signedData, material: strings.map(\.utf8))
        guard jws.signature.count == 64 else {
            throw SignedDataError(.malformedSignature, field: "signature",
                reason: "\(jws.signature.count) signature bytes; ES256 signatures are raw 64-byte r‖s (DER is refused)")
        }
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try P256.Signing.ECDSASignature(rawRepresentation: jws.signature)
        } catch {
            throw SignedDataError(.malformedSignature, field: "signature", reason: "not a raw P-256 signature")
        }
        let cached = chainVerifier.cachedSigner(for: cacheKey)
        var certificates: [CandidateCertificate]?
        let key: P256.Signing.PublicKey?
        if let cached {
            key = cached.p256PublicKey
        } else {
            let parsed = try Self.parseCertificates(strings)
            certificates = parsed
            key = P256.Signing.PublicKey(parsed[0].certificate.publicKey)
        }
        guard let key else {
            throw SignedDataError(.unsupportedKey, field: "header.x5c[0]", reason: "the leaf certificate's key is not P-256")
        }
        guard key.isValidSignature(signature, for: jws.signingInput) else {
            throw SignedDataError(.signatureInvalid, field: "signature", reason: "the signature does not verify with the key of x5c[0]")
        }
        return Signed(cacheKey: cacheKey, cached: cached, certificates: certificates)
    }

    /// Chain: the `x5c` chain is valid at the validation time (the signing time unless told
    /// otherwise). A cached chain valid at that time costs nothing; otherwise the chain is
    /// validated (and cached) by the chain verifier.
    func validateChain(_ jws: CompactJWS, _ signed: Signed, signingTime: Date) async throws(SignedDataError) -> Authentication {
        let time: Date
        switch validationTime {
        case .signingTime: time = signingTime
        case .now: time = clock()
        case .fixed(let date): time = date
        }
        if let cached = signed.cached, cached.isValid(at: time) {
            remember(jws)
            return Authentication(signer: cached, validationTime: time, cacheHit: true)
        }
        // Not cached, or cached but not valid at this time: validate, so the chain verifier
        // names exactly what fails.
        let certificates: [CandidateCertificate]
        if let parsed = signed.certificates {
            certificates = parsed
        } else {
            certificates = try Self.parseCertificates(jws.header.certificateChain)
        }
        // The last certificate is the root itself: the pinned Apple Root CA - G3 by fingerprint,
        // or an enabled opt-in anchor — by fingerprint, or (a trust anchor being a name and a
        // key, RFC 5280) another certificate with the anchor's subject and key, which the chain
        // verifier then checks issued x5c[1]. (A lone certificate is its own root: Xcode's.)
        let store = chainVerifier.trustStore
        let isRoot = { (fingerprint: Fingerprint) in
            fingerprint == ChainPolicy.signedData.pinnedRoot || store.isOptInAnchor(fingerprint)
        }
        if let root = certificates.last, !isRoot(root.fingerprint),
           certificates.count == 1 || !store.isOptInAnchor(named: root.certificate.subject, key: root.certificate.publicKey) {
            if let index = certificates.firstIndex(where: { isRoot($0.fingerprint) }) {
                throw SignedDataError(.chain(.wrongOrder), field: "header.x5c[\(index)]",
                    reason: "the root is listed at position \(index); x5c lists leaf, intermediate, root")
            }
            let reason: String
            if certificates.count == 1 {
                reason = "a lone certificate is trusted only when it is an enabled opt-in anchor (Xcode's StoreKit Testing certificate)"
            } else if store.anchors.contains(where: { $0.certificate.subject == root.certificate.subject }) {
                reason = "the root in x5c copies the name of a trusted root (\(root.certificate.subject)) but not its key: a forged root"
            } else {
                reason = "the root in x5c (\(root.certificate.subject)) is neither the pinned Apple Root CA - G3 nor an enabled opt-in anchor"
            }
            throw SignedDataError(.chain(.untrustedRoot), field: "header.x5c[\(certificates.count - 1)]", reason: reason)
        }
        do throws(ChainError) {
            let signer = try await chainVerifier.validate(
                CandidateChain(certificates: certificates, leafIndex: 0, mustBeOrdered: true),
                at: time,
                policy: .signedData,
                cacheKey: signed.cacheKey
            )
            remember(jws)
            return Authentication(signer: signer, validationTime: time, cacheHit: false)
        } catch {
            throw SignedDataError(chain: error, field: "header.x5c")
        }
    }

    /// Keeps the header of a JWS whose signature and chain held, for the next one signed under it.
    private func remember(_ jws: CompactJWS) {
        if !jws.headerWasKnown {
            headerMemo.keep(jws.header, for: jws.headerSegment)
        }
    }

    /// Decodes and parses the `x5c` certificates (standard base64 DER).
    private static func parseCertificates(_ strings: [String]) throws(SignedDataError) -> [CandidateCertificate] {
        var certificates: [CandidateCertificate] = []
        certificates.reserveCapacity(strings.count)
        for (index, string) in strings.enumerated() {
            guard let der = Base64.decode(string, mode: .standard) else {
                throw SignedDataError(.chain(.malformedCertificate), field: "header.x5c[\(index)]", reason: "not standard base64")
            }
            do throws(ChainError) {
                certificates.append(try CandidateCertificate(der: der))
            } catch {
                throw SignedDataError(chain: error, field: "header.x5c[\(index)]")
            }
        }
        return certificates
    }

    // MARK: - Expectations

    static func required<T>(_ value: T?, _ field: String) throws(SignedDataError) -> T {
        guard let value else {
            throw SignedDataError(.missingField, field: field, reason: "the payload has no \(field)")
        }
        return value
    }

    /// Expectations: runs every check ``SignedDataExpectations`` composes against `claims`,
    /// in order; the first failure is the verdict. A trace keeps every result for the report.
    func expect(_ claims: SignedDataClaims, trace: Trace?) throws(SignedDataError) {
        guard let trace else {
            // Only the verdict: the first failure, no report lines (this path is most of what
            // the checks cost a verification, about a microsecond, through the generic outcome).
            var failure: SignedDataError?
            expectations.forEachCheck { check in
                guard failure == nil, case .fails(let error, _) = check.evaluate(claims) else { return }
                failure = error
            }
            if let failure { throw failure }
            return
        }
        var outcome = ExpectationOutcome<SignedDataError>()
        expectations.forEachCheck { check in
            outcome.record(check.name, check.evaluate(claims))
        }
        trace.checks = outcome.checks
        if let failure = outcome.failure {
            throw failure
        }
    }

    func details(
        _ kind: ProofKind,
        _ jws: CompactJWS,
        _ environment: (claimed: AppStoreEnvironment, reported: AppStoreEnvironment),
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
