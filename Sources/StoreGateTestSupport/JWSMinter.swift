public import Crypto
import Foundation
import StoreGateCore

/// Mints StoreKit 2-shaped compact JWS signed by a ``TestCertificateAuthority`` (P-256), with
/// knobs for every attack a verifier must refuse: another `alg` (`none`, `HS256` keyed with
/// the leaf's public key), any `x5c` (count, order, foreign certificates), a DER instead of a
/// raw signature, a signature by another key, a payload changed after signing.
public struct JWSMinter: Sendable {
    /// How the third part is made.
    public enum Signature: Sendable {
        /// ES256 as Apple signs: raw 64-byte `r‖s`.
        case raw
        /// ES256 with the DER (`SEQUENCE { r, s }`) encoding instead.
        case der
        /// HMAC-SHA256 keyed with `secret` (the algorithm-confusion attack).
        case hmacSHA256(secret: [UInt8])
        /// These exact bytes.
        case bytes([UInt8])
        /// An empty third part (what `alg: none` tokens carry).
        case empty
    }

    /// The protected header.
    public struct Header: Sendable {
        /// `alg`.
        public var algorithm: String? = "ES256"
        /// `x5c`: standard-base64 certificates; `nil` omits the member.
        public var certificateChain: [String]?
        /// `kid`.
        public var keyId: String?
        /// `typ`.
        public var type: String?
        /// Further members, written verbatim as `"name":value` (value is raw JSON).
        public var extraMembers: [(name: String, json: String)] = []

        public init(algorithm: String? = "ES256", certificateChain: [String]?, keyId: String? = nil, type: String? = nil) {
            self.algorithm = algorithm
            self.certificateChain = certificateChain
            self.keyId = keyId
            self.type = type
        }

        /// The header as JSON bytes.
        public var json: [UInt8] {
            var members: [String] = []
            if let algorithm { members.append("\"alg\":\(Self.quote(algorithm))") }
            if let certificateChain { members.append("\"x5c\":[\(certificateChain.map(Self.quote).joined(separator: ","))]") }
            if let keyId { members.append("\"kid\":\(Self.quote(keyId))") }
            if let type { members.append("\"typ\":\(Self.quote(type))") }
            for member in extraMembers { members.append("\(Self.quote(member.name)):\(member.json)") }
            return Array("{\(members.joined(separator: ","))}".utf8)
        }

        private static func quote(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
    }

    /// The authority whose leaf signs.
    public let authority: TestCertificateAuthority

    /// A minter signing with `authority`'s leaf (a P-256 authority).
    public init(authority: TestCertificateAuthority) {
        self.authority = authority
    }

    /// A minter on the process-wide shared P-256 authority.
    public static func shared(label: String = "StoreGate Test") throws -> JWSMinter {
        JWSMinter(authority: try TestCertificateAuthority.shared(.p256, label: label))
    }

    /// The authority's chain as `x5c` strings: leaf, intermediate, root.
    public var chain: [String] { authority.chainDER.map { Base64.encode($0) } }

    /// The default header: `ES256` and the authority's chain.
    public var defaultHeader: Header { Header(certificateChain: chain) }

    /// The leaf's public key as PEM, the secret of the classic `HS256` confusion attack.
    public var leafPublicKeyPEM: [UInt8] {
        Array((authority.leaf.p256Key?.publicKey.pemRepresentation ?? "").utf8)
    }

    /// Mints a JWS over `payload` bytes.
    ///
    /// - Parameters:
    ///   - payload: The payload bytes (usually JSON).
    ///   - header: The header; ``defaultHeader`` when `nil`.
    ///   - signature: How to sign.
    ///   - key: The signing key; the authority's leaf key when `nil`.
    public func mint(
        payload: [UInt8],
        header: Header? = nil,
        signature: Signature = .raw,
        key: P256.Signing.PrivateKey? = nil
    ) throws -> String {
        let header = header ?? defaultHeader
        let signingInput = Base64.encode(header.json, url: true) + "." + Base64.encode(payload, url: true)
        let signatureBytes: [UInt8]
        switch signature {
        case .raw, .der:
            guard let signingKey = key ?? authority.leaf.p256Key else {
                throw MintError("the authority's leaf has no P-256 key; use TestCertificateAuthority(keyKind: .p256)")
            }
            let ecdsa = try signingKey.signature(for: Array(signingInput.utf8))
            signatureBytes = signature.isDER ? Array(ecdsa.derRepresentation) : Array(ecdsa.rawRepresentation)
        case .hmacSHA256(let secret):
            let mac = HMAC<SHA256>.authenticationCode(for: Array(signingInput.utf8), using: SymmetricKey(data: secret))
            signatureBytes = Array(mac)
        case .bytes(let bytes):
            signatureBytes = bytes
        case .empty:
            signatureBytes = []
        }
        return signingInput + "." + Base64.encode(signatureBytes, url: true)
    }

    /// Mints a JWS over a JSON object (keys sorted, slashes unescaped).
    public func mint(
        json object: [String: Any],
        header: Header? = nil,
        signature: Signature = .raw,
        key: P256.Signing.PrivateKey? = nil
    ) throws -> String {
        try mint(payload: Self.json(object), header: header, signature: signature, key: key)
    }

    /// Serializes a JSON object deterministically.
    public static func json(_ object: [String: Any]) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
    }

    /// Replaces the payload of a compact JWS, keeping its header and signature: a payload
    /// "changed after signing".
    public static func replacingPayload(of jws: String, with payload: [UInt8]) -> String {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return jws }
        return "\(parts[0]).\(Base64.encode(payload, url: true)).\(parts[2])"
    }

    /// Why minting failed.
    public struct MintError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}

extension JWSMinter.Signature {
    fileprivate var isDER: Bool {
        if case .der = self { return true }
        return false
    }
}
