/// The steps of verifying a proof, in the order they run. Every error names its step.
public enum VerificationStep: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// Reading the input: size limit, base64, the outer encoding.
    case input
    /// The container: PKCS#7 SignedData, or the JWS header and parts.
    case structure
    /// Finding the signing certificate among the embedded ones.
    case signer
    /// The cryptographic signature over the content.
    case signature
    /// Decoding the signed content: receipt attributes, JSON payload (it names the signing
    /// time the chain is checked at, so it runs before the chain, after the signature).
    case payload
    /// The certificate chain to a pinned Apple root or an opt-in anchor, at the signing time.
    case chain
    /// The caller's expectations: bundle id, version, environment, device, product.
    case expectations

    public var description: String { rawValue }
}
