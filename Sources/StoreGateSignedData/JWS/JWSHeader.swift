import StoreGateCore

/// The protected header of an Apple JWS, read but not trusted.
///
/// ```json
/// {"alg":"ES256","x5c":["MIIE…leaf","MIID…intermediate","MIIC…root"],"kid":"…","typ":"JWT"}
/// ```
///
/// Reading it checks only its shape: `alg` is exactly `ES256`, `x5c` is a non-empty array of
/// strings, and none of the parameters that would change how the signature is checked
/// (`crit`, `jku`, `jwk`, `x5u`) is present. How many certificates `x5c` may hold is checked
/// by ``SignedDataVerifier`` (three, or one opt-in anchor).
public struct JWSHeader: Sendable, Hashable {
    /// The only algorithm Apple uses, and the only one StoreGate accepts.
    public static let es256 = "ES256"

    /// `alg`: always ``es256`` once read.
    public let algorithm: String
    /// `x5c`: the certificate chain as standard-base64 DER strings, leaf first, exactly as
    /// written (the chain cache is keyed on these strings).
    public let certificateChain: [String]
    /// `kid`, when present (Xcode writes `Apple_Xcode_Key`).
    public let keyId: String?
    /// `typ`, when present.
    public let type: String?

    /// Parameters that change how a JWS is verified; StoreGate honours none of them, so a
    /// header carrying one is refused rather than silently misread.
    static let refusedParameters: Set<String> = ["crit", "jku", "jwk", "x5u"]

    /// Reads a header from its decoded JSON bytes.
    ///
    /// - Throws: ``SignedDataError`` in the `structure` step: ``SignedDataError/Code/malformedHeader``,
    ///   ``SignedDataError/Code/unsupportedAlgorithm``, ``SignedDataError/Code/unsupportedHeaderParameter``,
    ///   ``SignedDataError/Code/missingCertificates``.
    public init(json: [UInt8]) throws(SignedDataError) {
        let object = try JSONReader.readObject(json, code: .malformedHeader, field: "header")
        var algorithm: String?
        var chain: [String]?
        var keyId: String?
        var type: String?
        for member in object.members {
            switch member.key {
            case "alg":
                guard case .string(let value) = member.value else {
                    throw SignedDataError(.unsupportedAlgorithm, field: "header.alg", reason: "alg is not a string")
                }
                algorithm = value
            case "x5c":
                guard case .array(let elements) = member.value else {
                    throw SignedDataError(.malformedHeader, field: "header.x5c", reason: "x5c is not an array")
                }
                var strings: [String] = []
                strings.reserveCapacity(elements.count)
                for element in elements {
                    guard case .string(let value) = element, !value.isEmpty else {
                        throw SignedDataError(.malformedHeader, field: "header.x5c", reason: "x5c holds something other than certificate strings")
                    }
                    strings.append(value)
                }
                chain = strings
            case "kid":
                guard case .string(let value) = member.value else {
                    throw SignedDataError(.malformedHeader, field: "header.kid", reason: "kid is not a string")
                }
                keyId = value
            case "typ":
                guard case .string(let value) = member.value else {
                    throw SignedDataError(.malformedHeader, field: "header.typ", reason: "typ is not a string")
                }
                type = value
            case let name where Self.refusedParameters.contains(name):
                throw SignedDataError(.unsupportedHeaderParameter, field: "header.\(name)", reason: "header parameter \(name) is not honoured")
            default:
                continue
            }
        }
        guard let algorithm else {
            throw SignedDataError(.unsupportedAlgorithm, field: "header.alg", reason: "the header names no algorithm")
        }
        guard algorithm == Self.es256 else {
            throw SignedDataError(.unsupportedAlgorithm, field: "header.alg", reason: "algorithm \(algorithm.prefix(16)) is not ES256")
        }
        guard let chain, !chain.isEmpty else {
            throw SignedDataError(.missingCertificates, field: "header.x5c", reason: "the header carries no x5c certificate chain")
        }
        self.algorithm = algorithm
        self.certificateChain = chain
        self.keyId = keyId
        self.type = type
    }
}
