import Crypto
public import Foundation
public import StoreGateCore
import SwiftASN1
import X509
import _CryptoExtras

/// Verifies app receipts offline.
///
/// The steps, each failing with its own ``ReceiptError``:
/// 1. **input** — size limit, base64;
/// 2. **structure** — PKCS#7 SignedData over id-data, read BER-tolerantly;
/// 3. **signer** — the one SignerInfo's issuer and serial number name an embedded certificate;
/// 4. **signature** — RSA PKCS#1 v1.5 over SHA-1 or SHA-256 of the content (or of the signed
///    attributes, whose message digest must then match);
/// 5. **payload** — the receipt attributes decode;
/// 6. **chain** — signer → intermediate (WWDR marker) → the pinned Apple Inc. Root CA, every
///    certificate valid at the receipt's creation date (or an opt-in anchor);
/// 7. **expectations** — the checks ``ReceiptExpectations`` composes (environment, bundle id,
///    app version, device hash, receipt expiration, transaction, product, then the caller's
///    own), in order; the first that fails is the verdict, and every result is reported.
///
/// Chain results are cached by `CertificateChainVerifier`: a second receipt signed by the
/// same certificates pays for its signature check and decoding only.
public struct ReceiptVerifier: Sendable {
    /// When certificate validity is checked.
    public enum ValidationTime: Sendable, Hashable {
        /// At the receipt's creation date (the default: Apple's signing certificates expire
        /// long before receipts stop mattering).
        case signingTime
        /// At a fixed time, e.g. now.
        case fixed(Date)
    }

    /// The chain verifier (and its cache and trust store).
    public let chainVerifier: CertificateChainVerifier
    public let limits: Limits
    /// The clock for the receipt-expiration check.
    public let now: @Sendable () -> Date

    public init(
        chainVerifier: CertificateChainVerifier = CertificateChainVerifier(),
        limits: Limits = .default,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.chainVerifier = chainVerifier
        self.limits = limits
        self.now = now
    }

    /// Verifies base64 receipt text (as apps send it; line breaks allowed).
    public func verify(
        base64: some StringProtocol,
        expecting expectations: ReceiptExpectations,
        at validationTime: ValidationTime = .signingTime
    ) async throws(ReceiptError) -> VerifiedReceipt {
        try await verify(ReceiptContainer.decodeBase64(base64, limits: limits), expecting: expectations, at: validationTime)
    }

    /// Verifies a receipt given as DER/BER bytes.
    ///
    /// - Throws: ``ReceiptError`` naming the first step that failed.
    public func verify(
        _ der: [UInt8],
        expecting expectations: ReceiptExpectations,
        at validationTime: ValidationTime = .signingTime
    ) async throws(ReceiptError) -> VerifiedReceipt {
        var progress = Progress()
        let signed = try await verifySignatureAndChain(der, at: validationTime, progress: &progress)
        let outcome = expectations.evaluate(claims(signed))
        if let failure = outcome.failure {
            throw failure
        }
        return VerifiedReceipt(
            receipt: signed.receipt,
            environment: signed.environment,
            signer: signed.signer,
            digestAlgorithm: signed.digestAlgorithm,
            signatureAlgorithm: signed.signatureAlgorithm,
            validationTime: signed.validationTime,
            checks: outcome.checks,
            rawReceipt: der
        )
    }

    /// Runs every step and reports each, rather than stopping at the first failure of the
    /// expectations (what `storegate verify` prints).
    public func report(
        _ der: [UInt8],
        expecting expectations: ReceiptExpectations,
        at validationTime: ValidationTime = .signingTime
    ) async -> ReceiptVerificationReport {
        var progress = Progress()
        do {
            let signed = try await verifySignatureAndChain(der, at: validationTime, progress: &progress)
            let outcome = expectations.evaluate(claims(signed))
            return ReceiptVerificationReport(failure: outcome.failure, checks: outcome.checks, signed: signed, progress: progress)
        } catch {
            return ReceiptVerificationReport(failure: error, checks: [], signed: nil, progress: progress)
        }
    }

    /// What the expectations see of a receipt whose signature and chain hold.
    private func claims(_ signed: SignedReceipt) -> ReceiptClaims {
        ReceiptClaims(receipt: signed.receipt, environment: signed.environment, clock: now)
    }

    /// What the signature and chain steps establish.
    struct SignedReceipt {
        let receipt: AppReceipt
        let environment: AppStoreEnvironment
        let signer: ValidatedSigner
        let digestAlgorithm: ReceiptDigestAlgorithm
        let signatureAlgorithm: ReceiptSignatureAlgorithm
        let validationTime: Date
    }

    private func verifySignatureAndChain(_ der: [UInt8], at validationTime: ValidationTime, progress: inout Progress) async throws(ReceiptError) -> SignedReceipt {
        // Structure.
        let container = try ReceiptContainer(der: der, limits: limits)
        let signedData = container.signedData
        guard let signerInfo = signedData.signerInfos.first else {
            throw ReceiptError(.noSigner, field: "SignedData.signerInfos", reason: "the receipt has no signer")
        }
        guard signedData.signerInfos.count == 1 else {
            throw ReceiptError(.multipleSigners, field: "SignedData.signerInfos", reason: "the receipt has \(signedData.signerInfos.count) signers")
        }
        guard !signedData.certificates.isEmpty else {
            throw ReceiptError(.signerNotFound, field: "SignedData.certificates", reason: "the receipt embeds no certificates")
        }

        // Signer: from the chain cache when these certificates were seen before.
        let cacheKey = ChainCacheKey(policy: .appReceipt, material: signedData.certificates)
        var parsed: ParsedSigner?
        let cached = chainVerifier.cachedSigner(for: cacheKey).flatMap { signer in
            Self.matches(signerInfo.identifier, signer) ? signer : nil
        }
        let rsaKey: _RSA.Signing.PublicKey
        if let cached {
            guard let key = cached.rsaPublicKey else {
                throw ReceiptError(.unsupportedKey, field: "signer certificate", reason: "the signer's key is not RSA")
            }
            rsaKey = key
            progress.signerSubject = cached.chain.first?.subject
        } else {
            let signer = try Self.findSigner(signerInfo.identifier, in: signedData.certificates)
            guard let key = _RSA.Signing.PublicKey(signer.chain.certificates[signer.chain.leafIndex].certificate.publicKey) else {
                throw ReceiptError(.unsupportedKey, field: "signer certificate", reason: "the signer's key is not RSA")
            }
            parsed = signer
            rsaKey = key
            progress.signerSubject = signer.chain.certificates[signer.chain.leafIndex].certificate.subject.description
        }

        // Signature.
        let (digestAlgorithm, signatureAlgorithm) = try Self.checkSignature(
            signerInfo, digestAlgorithms: signedData.digestAlgorithms, content: container.content, key: rsaKey
        )

        progress.digestAlgorithm = digestAlgorithm
        progress.signatureAlgorithm = signatureAlgorithm

        // Payload.
        let receipt = try AppReceipt(payload: container.content, limits: limits)
        progress.receipt = receipt

        // Chain, at the creation date unless told otherwise.
        let time: Date
        switch validationTime {
        case .signingTime: time = receipt.creationDate
        case .fixed(let date): time = date
        }
        progress.validationTime = time
        let signer: ValidatedSigner
        if let cached, cached.isValid(at: time) {
            signer = cached
        } else {
            let candidate: ParsedSigner
            if let parsed {
                candidate = parsed
            } else {
                candidate = try Self.findSigner(signerInfo.identifier, in: signedData.certificates)
            }
            do {
                signer = try await chainVerifier.validate(candidate.chain, at: time, policy: .appReceipt, cacheKey: cacheKey)
            } catch {
                throw ReceiptError(error)
            }
        }
        return SignedReceipt(
            receipt: receipt,
            environment: signer.reportedEnvironment(claimed: receipt.claimedEnvironment),
            signer: signer,
            digestAlgorithm: digestAlgorithm,
            signatureAlgorithm: signatureAlgorithm,
            validationTime: time
        )
    }

    /// What the steps established before one failed, for reports.
    struct Progress {
        var signerSubject: String?
        var digestAlgorithm: ReceiptDigestAlgorithm?
        var signatureAlgorithm: ReceiptSignatureAlgorithm?
        var receipt: AppReceipt?
        var validationTime: Date?
    }

    struct ParsedSigner {
        let chain: CandidateChain
    }

    /// Parses the embedded certificates and finds the one the signer identifier names.
    static func findSigner(_ identifier: PKCS7SignerInfo.Identifier, in certificates: [ArraySlice<UInt8>]) throws(ReceiptError) -> ParsedSigner {
        var candidates: [CandidateCertificate] = []
        for der in certificates {
            do {
                candidates.append(try CandidateCertificate(der: Array(der)))
            } catch {
                throw ReceiptError(.malformedCertificate, field: "SignedData.certificates", reason: "an embedded certificate is not DER X.509")
            }
        }
        // A closure-based search: no throwing loop returns a certificate (see NOTES.md on -O).
        let leafIndex: Int?
        switch identifier {
        case .issuerAndSerialNumber(let issuerNode, let serial):
            let issuer: DistinguishedName
            do {
                issuer = try DistinguishedName(derEncoded: issuerNode)
            } catch {
                throw ReceiptError(.malformedPKCS7, field: "SignerInfo.sid.issuer", reason: "the signer's issuer is not a Name")
            }
            let wanted = Self.normalizedSerial(serial)
            leafIndex = candidates.firstIndex { candidate in
                candidate.certificate.issuer == issuer
                    && Self.normalizedSerial(candidate.certificate.serialNumber.bytes[...]) == wanted
            }
        case .subjectKeyIdentifier(let keyIdentifier):
            var keyIdentifiers: [ArraySlice<UInt8>?] = []
            for candidate in candidates {
                do {
                    keyIdentifiers.append(try candidate.certificate.extensions.subjectKeyIdentifier?.keyIdentifier)
                } catch {
                    throw ReceiptError(.malformedCertificate, field: "SignedData.certificates", reason: "a subject key identifier is malformed")
                }
            }
            leafIndex = keyIdentifiers.firstIndex { $0 == keyIdentifier }
        }
        guard let leafIndex else {
            throw ReceiptError(.signerNotFound, field: "SignerInfo.sid", reason: "no embedded certificate matches the signer's issuer and serial number")
        }
        return ParsedSigner(chain: CandidateChain(certificates: candidates, leafIndex: leafIndex, mustBeOrdered: false))
    }

    /// Whether a cached signer is the one the identifier names (compared as encoded).
    static func matches(_ identifier: PKCS7SignerInfo.Identifier, _ signer: ValidatedSigner) -> Bool {
        guard case .issuerAndSerialNumber(let issuer, let serial) = identifier else { return false }
        return issuer.encodedBytes.elementsEqual(signer.leafIssuerDER)
            && normalizedSerial(serial) == normalizedSerial(signer.leafSerialNumber[...])
    }

    static func normalizedSerial(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        bytes.drop { $0 == 0 }
    }

    /// Checks the algorithms and the RSA signature; returns the algorithms used.
    static func checkSignature(
        _ signerInfo: PKCS7SignerInfo,
        digestAlgorithms: [ASN1ObjectIdentifier],
        content: [UInt8],
        key: _RSA.Signing.PublicKey
    ) throws(ReceiptError) -> (ReceiptDigestAlgorithm, ReceiptSignatureAlgorithm) {
        guard let digestAlgorithm = ReceiptDigestAlgorithm(oid: signerInfo.digestAlgorithm) else {
            throw ReceiptError(.unsupportedAlgorithm, field: "SignerInfo.digestAlgorithm", reason: "digest \(signerInfo.digestAlgorithm) is not SHA-1 or SHA-256")
        }
        guard digestAlgorithms.contains(signerInfo.digestAlgorithm) else {
            throw ReceiptError(.digestAlgorithmMismatch, field: "SignedData.digestAlgorithms", reason: "the signer's digest algorithm is not listed")
        }
        guard let signatureAlgorithm = ReceiptSignatureAlgorithm(oid: signerInfo.signatureAlgorithm) else {
            throw ReceiptError(.unsupportedAlgorithm, field: "SignerInfo.signatureAlgorithm", reason: "signature algorithm \(signerInfo.signatureAlgorithm) is not RSA PKCS#1 v1.5")
        }
        guard signatureAlgorithm.isCompatible(with: digestAlgorithm) else {
            throw ReceiptError(.digestAlgorithmMismatch, field: "SignerInfo.signatureAlgorithm", reason: "the signature algorithm contradicts the digest algorithm")
        }

        var signedBytes = content
        if let attributes = signerInfo.signedAttributes, let attributesDER = signerInfo.signedAttributesDER {
            let contentDigest = digest(content, digestAlgorithm)
            let messageDigest = attributes.first { $0.type == PKCS7OID.messageDigestAttribute }
            let contentType = attributes.first { $0.type == PKCS7OID.contentTypeAttribute }
            let digestMatches: Bool
            let typeMatches: Bool
            do {
                digestMatches = try messageDigest.map { try ASN1OctetString(berEncoded: $0.value).bytes.elementsEqual(contentDigest) } ?? false
                typeMatches = try contentType.map { try ASN1ObjectIdentifier(berEncoded: $0.value) == PKCS7OID.data } ?? false
            } catch {
                throw ReceiptError(.signedAttributesInvalid, field: "SignerInfo.signedAttrs", reason: "a signed attribute is malformed")
            }
            guard digestMatches else {
                throw ReceiptError(.signedAttributesInvalid, field: "SignerInfo.signedAttrs.messageDigest", reason: "the message digest does not match the content")
            }
            guard typeMatches else {
                throw ReceiptError(.signedAttributesInvalid, field: "SignerInfo.signedAttrs.contentType", reason: "the content type attribute is not id-data")
            }
            signedBytes = attributesDER
        }

        let signature = _RSA.Signing.RSASignature(rawRepresentation: signerInfo.signature)
        let valid: Bool
        switch digestAlgorithm {
        case .sha1: valid = key.isValidSignature(signature, for: Insecure.SHA1.hash(data: signedBytes), padding: .insecurePKCS1v1_5)
        case .sha256: valid = key.isValidSignature(signature, for: SHA256.hash(data: signedBytes), padding: .insecurePKCS1v1_5)
        }
        guard valid else {
            throw ReceiptError(.signatureInvalid, field: "SignerInfo.signature", reason: "the RSA signature does not verify over the receipt")
        }
        return (digestAlgorithm, signatureAlgorithm)
    }

    static func digest(_ bytes: [UInt8], _ algorithm: ReceiptDigestAlgorithm) -> [UInt8] {
        switch algorithm {
        case .sha1: return Array(Insecure.SHA1.hash(data: bytes))
        case .sha256: return Array(SHA256.hash(data: bytes))
        }
    }
}
