public import SwiftASN1

/// What a certificate chain must look like for one kind of proof.
///
/// Both of Apple's proof formats use a three-certificate chain: a leaf carrying
/// ``AppleOID/receiptSigning``, an intermediate carrying ``AppleOID/wwdrIntermediate``
/// and a root pinned by fingerprint. They differ in the root.
public struct ChainPolicy: Sendable, Hashable {
    /// A short name used in reports and cache keys (`app-receipt`, `signed-data`).
    public let name: String
    /// The SHA-256 fingerprint of the one Apple root this kind of proof may chain to.
    public let pinnedRoot: Fingerprint
    /// The OID the leaf must carry.
    public let leafMarker: ASN1ObjectIdentifier
    /// The OID the intermediate must carry.
    public let intermediateMarker: ASN1ObjectIdentifier

    public init(name: String, pinnedRoot: Fingerprint, leafMarker: ASN1ObjectIdentifier, intermediateMarker: ASN1ObjectIdentifier) {
        self.name = name
        self.pinnedRoot = pinnedRoot
        self.leafMarker = leafMarker
        self.intermediateMarker = intermediateMarker
    }

    /// App receipts: chain to Apple Inc. Root CA.
    public static let appReceipt = ChainPolicy(
        name: "app-receipt",
        pinnedRoot: TrustStore.appleRootCA,
        leafMarker: AppleOID.receiptSigning,
        intermediateMarker: AppleOID.wwdrIntermediate
    )

    /// StoreKit 2 JWS and notifications: chain to Apple Root CA - G3.
    public static let signedData = ChainPolicy(
        name: "signed-data",
        pinnedRoot: TrustStore.appleRootCAG3,
        leafMarker: AppleOID.receiptSigning,
        intermediateMarker: AppleOID.wwdrIntermediate
    )
}
