@_spi(FixedExpiryValidationTime) import X509
public import Foundation
import SwiftASN1
import Synchronization

/// Validates the certificate chains of Apple's proofs with swift-certificates' `Verifier`,
/// and remembers what it validated.
///
/// A chain is valid when it ends in the pinned Apple root of the proof's ``ChainPolicy`` (or
/// an enabled opt-in anchor), every certificate is valid at the time the proof was signed
/// (RFC 5280 rules, checked at that fixed time), the leaf carries Apple's receipt-signing
/// marker and the intermediate Apple's WWDR marker.
///
/// Results are cached by ``ChainCacheKey`` together with the span in which every
/// certificate is valid: a later proof from the same certificates, signed inside that span,
/// skips parsing and validation and pays only for its own signature check. Only successful
/// validations are cached, and the cache holds at most `cacheCapacity` chains.
public final class CertificateChainVerifier: Sendable {
    /// The anchors this verifier trusts.
    public let trustStore: TrustStore
    private let cache: Mutex<Cache>
    private let optInCertificates: [Certificate]

    /// Creates a verifier.
    ///
    /// - Parameters:
    ///   - trustStore: Apple roots supplied as files and opt-in anchors.
    ///   - cacheCapacity: How many validated chains to remember.
    public init(trustStore: TrustStore = TrustStore(), cacheCapacity: Int = 1024) {
        self.trustStore = trustStore
        self.optInCertificates = trustStore.optInAnchors.map(\.certificate)
        self.cache = Mutex(Cache(capacity: max(1, cacheCapacity)))
    }

    /// Counters of the work done, for tests and metrics.
    public struct Statistics: Hashable, Sendable {
        /// Full validations run with `Verifier` (successful or not).
        public var validations: Int
        /// Lookups answered from the cache.
        public var cacheHits: Int

        public init(validations: Int, cacheHits: Int) {
            self.validations = validations
            self.cacheHits = cacheHits
        }
    }

    /// The work done so far.
    public var statistics: Statistics { cache.withLock { $0.statistics } }

    /// How many chains are cached.
    public var cachedChainCount: Int { cache.withLock { $0.entries.count } }

    /// Forgets every cached chain.
    public func clearCache() {
        cache.withLock { cache in
            cache.entries.removeAll()
        }
    }

    /// The cached result for these certificates, whatever the time; check
    /// ``ValidatedSigner/isValid(at:)`` before trusting it at a given time.
    public func cachedSigner(for key: ChainCacheKey) -> ValidatedSigner? {
        cache.withLock { cache in
            let signer = cache.entries[key]
            if signer != nil { cache.statistics.cacheHits += 1 }
            return signer
        }
    }

    /// The cached result for these certificates, when there is one valid at `time`.
    public func cachedSigner(for key: ChainCacheKey, at time: Date) -> ValidatedSigner? {
        guard let signer = cachedSigner(for: key), signer.isValid(at: time) else { return nil }
        return signer
    }

    /// Validates a chain at `time` under `policy`, caching the result under `cacheKey`.
    ///
    /// - Throws: ``ChainError`` naming what failed.
    public func validate(
        _ candidate: CandidateChain,
        at time: Date,
        policy: ChainPolicy,
        cacheKey: ChainCacheKey?
    ) async throws(ChainError) -> ValidatedSigner {
        let certificates = candidate.certificates
        guard !certificates.isEmpty else {
            throw ChainError(.noCertificates, reason: "the proof carries no certificates")
        }
        guard certificates.indices.contains(candidate.leafIndex) else {
            throw ChainError(.invalidChain, reason: "signer index out of range")
        }
        if candidate.mustBeOrdered {
            try Self.checkOrder(certificates)
        }
        let leaf = certificates[candidate.leafIndex]
        cache.withLock { $0.statistics.validations += 1 }

        // Roots: embedded certificates matching the pin, Apple roots from files, opt-in anchors.
        // Nothing else the proof carries is trusted as a root.
        var roots = certificates.filter { $0.fingerprint == policy.pinnedRoot }.map(\.certificate)
        roots += trustStore.appleRoots.filter { $0.fingerprint == policy.pinnedRoot }.map(\.certificate)
        roots += optInCertificates
        guard !roots.isEmpty else {
            throw ChainError(.untrustedRoot, reason: "no certificate matches the pinned \(policy.name) root and no opt-in anchor is enabled")
        }

        var intermediates: [Certificate] = []
        for (index, certificate) in certificates.enumerated() where index != candidate.leafIndex {
            intermediates.append(certificate.certificate)
        }

        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            AppleMarkerPolicy(policy: policy, optInAnchors: Set(optInCertificates))
        }
        let result = await verifier.validate(leaf: leaf.certificate, intermediates: CertificateStore(intermediates))
        let validated: [Certificate]
        switch result {
        case .validCertificate(let chain):
            validated = Array(chain)
        case .couldNotValidate:
            throw Self.diagnose(leaf: leaf.certificate, others: intermediates, roots: roots, at: time, policy: policy, optIn: optInCertificates)
        }

        if candidate.mustBeOrdered {
            try Self.checkListed(certificates, against: validated, policy: policy)
        }
        let lookup = Dictionary(certificates.map { ($0.certificate, $0.fingerprint) }, uniquingKeysWith: { first, _ in first })
        let appleRootLookup = Dictionary(trustStore.appleRoots.map { ($0.certificate, $0.fingerprint) }, uniquingKeysWith: { first, _ in first })
        let optInLookup = Dictionary(trustStore.optInAnchors.map { ($0.certificate, $0.fingerprint) }, uniquingKeysWith: { first, _ in first })
        var fingerprints: [Fingerprint] = []
        for certificate in validated {
            guard let fingerprint = lookup[certificate] ?? appleRootLookup[certificate] ?? optInLookup[certificate] else {
                throw ChainError(.invalidChain, reason: "validated chain holds an unknown certificate")
            }
            fingerprints.append(fingerprint)
        }
        guard let rootFingerprint = fingerprints.last else {
            throw ChainError(.noCertificates, reason: "empty validated chain")
        }
        let anchor: ValidatedSigner.Anchor = rootFingerprint == policy.pinnedRoot ? .apple : .optIn
        let signer = try ValidatedSigner(chain: validated, fingerprints: fingerprints, anchor: anchor)
        if let cacheKey {
            cache.withLock { $0.entries.insert(signer, for: cacheKey) }
        }
        return signer
    }

    /// Checks that each listed certificate is issued by the next one.
    private static func checkOrder(_ certificates: [CandidateCertificate]) throws(ChainError) {
        for index in certificates.indices.dropLast() {
            let issuerName = certificates[index].certificate.issuer
            let next = certificates[index + 1].certificate
            if issuerName != next.subject {
                throw ChainError(.wrongOrder, reason: "certificate \(index) is not issued by certificate \(index + 1)")
            }
        }
        if let last = certificates.last?.certificate, certificates.count > 1, last.issuer != last.subject {
            throw ChainError(.wrongOrder, reason: "the last certificate is not a self-signed root")
        }
    }

    /// An ordered chain (JWS `x5c`) must be the validated chain as listed: the same leaf and
    /// intermediates, and a last certificate that is the anchor. A trust anchor is a name and a
    /// key (RFC 5280 §6.1.1 d), so for an opt-in anchor another certificate object with the
    /// same subject and key is the anchor too (Apple's app-store-server-library test data is
    /// signed that way); a pinned Apple root must be listed as itself, its fingerprint pinned.
    private static func checkListed(_ listed: [CandidateCertificate], against validated: [Certificate], policy: ChainPolicy) throws(ChainError) {
        guard validated.count == listed.count,
              zip(validated.dropLast(), listed.dropLast()).allSatisfy({ $0 == $1.certificate }),
              let anchor = validated.last, let last = listed.last
        else {
            throw ChainError(.wrongOrder, reason: "the validated chain differs from the certificates as listed")
        }
        guard anchor != last.certificate else { return }
        guard last.fingerprint != policy.pinnedRoot else {
            throw ChainError(.wrongOrder, reason: "the validated chain differs from the certificates as listed")
        }
        if anchor.subject == last.certificate.subject, anchor.publicKey == last.certificate.publicKey, listed.count > 1 {
            return
        }
        throw ChainError(
            .untrustedRoot,
            reason: "certificate \(listed.count - 1) is not the anchor that issued certificate \(listed.count - 2) (another name or key)")
    }

    /// Names the reason a chain failed, after `Verifier` refused it.
    private static func diagnose(
        leaf: Certificate,
        others: [Certificate],
        roots: [Certificate],
        at time: Date,
        policy: ChainPolicy,
        optIn: [Certificate]
    ) -> ChainError {
        // Walk issuer links from the leaf, preferring roots, the way chain building does.
        var path = [leaf]
        var current = leaf
        while !roots.contains(current), path.count < 8 {
            let issuerName = current.issuer
            let candidates = roots.filter { $0.subject == issuerName } + others.filter { $0.subject == issuerName }
            guard let next = candidates.first(where: { !path.contains($0) }) else { break }
            path.append(next)
            current = next
        }
        guard let top = path.last, roots.contains(top) else {
            return ChainError(.untrustedRoot, reason: "the chain does not end in the pinned \(policy.name) root or an opt-in anchor")
        }
        // Signatures first: a certificate that names a trusted root as its issuer but is not
        // signed by that root's key hangs from a foreign root copying the trusted one's name.
        for index in path.indices.dropLast() {
            let certificate = path[index]
            let issuer = path[index + 1]
            guard !issuer.publicKey.isValidSignature(certificate.signature, for: certificate) else { continue }
            let role = Self.role(index, of: path.count)
            if index + 1 == path.count - 1 {
                return ChainError(
                    .untrustedRoot,
                    reason: "the \(role) names \(issuer.subject) as its issuer, but its signature does not verify under that trusted root's key: a forged root copying the trusted one's name")
            }
            return ChainError(.invalidChain, reason: "the \(role)'s signature does not verify under the key of the \(Self.role(index + 1, of: path.count)) it names as its issuer")
        }
        for (index, certificate) in path.enumerated() where time < certificate.notValidBefore || time > certificate.notValidAfter {
            let role = Self.role(index, of: path.count)
            return ChainError(.notValidAtSigningTime, reason: "the \(role) certificate is not valid at the signing time")
        }
        if path.count == 1 {
            return ChainError(.untrustedRoot, reason: "a lone certificate is trusted only as an opt-in anchor")
        }
        guard path.count == 3 else {
            return ChainError(.wrongLength, reason: "the chain has \(path.count) certificates; Apple's have 3")
        }
        if path[0].extensions[oid: policy.leafMarker] == nil {
            return ChainError(.leafMarkerMissing, reason: "the leaf lacks Apple's receipt-signing marker \(policy.leafMarker)")
        }
        if path[1].extensions[oid: policy.intermediateMarker] == nil {
            return ChainError(.intermediateMarkerMissing, reason: "the intermediate lacks Apple's WWDR marker \(policy.intermediateMarker)")
        }
        return ChainError(.invalidChain, reason: "a certificate signature, key usage or constraint is not valid")
    }

    private static func role(_ index: Int, of count: Int) -> String {
        index == 0 ? "leaf" : (index == count - 1 ? "root" : "intermediate")
    }

    /// The bounded result cache (first in, first out) and the work counters.
    private struct Cache: ~Copyable {
        var entries: BoundedCache<ChainCacheKey, ValidatedSigner>
        var statistics = Statistics(validations: 0, cacheHits: 0)

        init(capacity: Int) {
            entries = BoundedCache(capacity: capacity)
        }
    }
}

/// Apple's marker OIDs and chain shape, as a `VerifierPolicy`.
///
/// A chain is the leaf alone only when the leaf is itself an opt-in anchor (Xcode's
/// self-signed StoreKit Testing certificate); otherwise it is exactly leaf → intermediate →
/// root, the leaf carrying the policy's leaf marker and the intermediate its intermediate
/// marker.
struct AppleMarkerPolicy: VerifierPolicy {
    /// Xcode's StoreKit Testing certificate marks its extended key usage critical; this policy
    /// accepts that extension (it does not restrict key usage further).
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [.X509ExtensionID.extendedKeyUsage]
    let policy: ChainPolicy
    let optInAnchors: Set<Certificate>

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        let certificates = Array(chain)
        if certificates.count == 1 {
            return optInAnchors.contains(certificates[0])
                ? .meetsPolicy
                : .failsToMeetPolicy(reason: "a lone certificate is trusted only as an opt-in anchor")
        }
        guard certificates.count == 3 else {
            return .failsToMeetPolicy(reason: "Apple's chains have three certificates")
        }
        guard certificates[0].extensions[oid: policy.leafMarker] != nil else {
            return .failsToMeetPolicy(reason: "leaf lacks the receipt-signing marker")
        }
        guard certificates[1].extensions[oid: policy.intermediateMarker] != nil else {
            return .failsToMeetPolicy(reason: "intermediate lacks the WWDR marker")
        }
        return .meetsPolicy
    }
}
