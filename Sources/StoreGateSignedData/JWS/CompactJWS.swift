import Foundation
public import StoreGateCore

/// A JWS in compact serialization (RFC 7515 §7.1), split and decoded but not verified:
///
/// ```
/// BASE64URL(header) '.' BASE64URL(payload) '.' BASE64URL(signature)
/// ```
///
/// Splitting is byte-wise: exactly two dots, each part strict unpadded base64url, the header a
/// JSON object naming `ES256` and carrying `x5c`. Nothing is trusted until
/// ``SignedDataVerifier`` has checked the chain and the signature over ``signingInput``.
public struct CompactJWS: Sendable {
    /// The serialization exactly as received.
    public let bytes: [UInt8]
    /// The decoded protected header.
    public let header: JWSHeader
    /// The decoded payload bytes (JSON for every Apple payload).
    public let payload: [UInt8]
    /// The decoded signature bytes (64 for a raw ES256 `r‖s`).
    public let signature: [UInt8]
    /// Where the payload's base64url ends: the signing input is `bytes[..<signingInputEnd]`.
    private let signingInputEnd: Int
    /// The header's base64url bytes, the key of a verifier's ``JWSHeaderMemo``.
    let headerSegment: ExactBytes
    /// Whether ``header`` came from a memo rather than from reading the bytes.
    let headerWasKnown: Bool

    /// The bytes the signature covers: `BASE64URL(header) '.' BASE64URL(payload)`.
    public var signingInput: ArraySlice<UInt8> { bytes[..<signingInputEnd] }

    /// Splits and decodes a compact JWS.
    ///
    /// - Parameters:
    ///   - bytes: The serialization, without surrounding whitespace.
    ///   - limits: `Limits.maxJWSBytes` bounds the input.
    /// - Throws: ``SignedDataError`` in the `input` or `structure` step.
    public init(bytes: [UInt8], limits: Limits = .default) throws(SignedDataError) {
        try self.init(bytes: bytes, limits: limits, headers: nil)
    }

    /// Splits and decodes a compact JWS, taking its header from `headers` when these exact
    /// header bytes were read and accepted before.
    init(bytes: [UInt8], limits: Limits, headers: JWSHeaderMemo?) throws(SignedDataError) {
        guard !bytes.isEmpty else {
            throw SignedDataError(.empty, reason: "the JWS is empty")
        }
        guard bytes.count <= limits.maxJWSBytes else {
            throw SignedDataError(.tooLarge, reason: "\(bytes.count) bytes is over the \(limits.maxJWSBytes)-byte JWS limit")
        }
        // memchr finds the dots at memory speed.
        let (first, second, third) = bytes.withUnsafeBytes { raw -> (Int, Int, Int) in
            func dot(after start: Int) -> Int {
                guard let base = raw.baseAddress, start < raw.count,
                      let hit = memchr(base + start, Int32(UInt8(ascii: ".")), raw.count - start)
                else { return -1 }
                return base.distance(to: UnsafeRawPointer(hit))
            }
            let first = dot(after: 0)
            let second = first < 0 ? -1 : dot(after: first + 1)
            let third = second < 0 ? -1 : dot(after: second + 1)
            return (first, second, third)
        }
        guard second >= 0, third < 0 else {
            let parts = bytes.reduce(1) { $1 == UInt8(ascii: ".") ? $0 + 1 : $0 }
            throw SignedDataError(.malformedCompactSerialization, reason: "a compact JWS has 3 dot-separated parts, this has \(parts)")
        }
        guard first > 0 else {
            throw SignedDataError(.malformedCompactSerialization, field: "header", reason: "the header part is empty")
        }
        // The header first, so `alg: none` (with its empty signature) is named as what it is.
        let segment = ExactBytes(bytes[..<first])
        if let known = headers?.header(for: segment) {
            self.header = known
            self.headerWasKnown = true
        } else {
            guard let headerJSON = bytes[..<first].withUnsafeBufferPointer({ Base64.decode($0, mode: .url) }) else {
                throw SignedDataError(.invalidBase64URL, field: "header", reason: "the header is not unpadded base64url")
            }
            self.header = try JWSHeader(json: headerJSON)
            self.headerWasKnown = false
        }
        self.headerSegment = segment
        guard second > first + 1 else {
            throw SignedDataError(.malformedCompactSerialization, field: "payload", reason: "the payload part is empty")
        }
        guard second < bytes.count - 1 else {
            throw SignedDataError(.malformedCompactSerialization, field: "signature", reason: "the signature part is empty")
        }
        guard let payload = bytes[(first + 1)..<second].withUnsafeBufferPointer({ Base64.decode($0, mode: .url) }) else {
            throw SignedDataError(.invalidBase64URL, field: "payload", reason: "the payload is not unpadded base64url")
        }
        guard let signature = bytes[(second + 1)...].withUnsafeBufferPointer({ Base64.decode($0, mode: .url) }) else {
            throw SignedDataError(.invalidBase64URL, field: "signature", reason: "the signature is not unpadded base64url")
        }
        self.bytes = bytes
        self.payload = payload
        self.signature = signature
        self.signingInputEnd = second
    }

    /// Splits and decodes a compact JWS given as a string.
    public init(_ string: some StringProtocol, limits: Limits = .default) throws(SignedDataError) {
        try self.init(bytes: Array(string.utf8), limits: limits)
    }

    /// Reads the payload as a JSON object.
    ///
    /// - Throws: ``SignedDataError/Code/malformedJSON`` in the `payload` step.
    func payloadObject() throws(SignedDataError) -> JSONObject {
        try JSONReader.readObject(payload, code: .malformedJSON, field: "payload")
    }
}
