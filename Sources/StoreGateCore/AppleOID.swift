public import SwiftASN1

/// Apple's marker OIDs that distinguish its receipt- and JWS-signing certificates.
public enum AppleOID {
    /// 1.2.840.113635.100.6.2.1: Apple Worldwide Developer Relations intermediate.
    public static let wwdrIntermediate: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    /// 1.2.840.113635.100.6.11.1: Mac App Store and iTunes Store receipt signing leaf
    /// (app receipts and StoreKit 2 JWS alike).
    public static let receiptSigning: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
}
