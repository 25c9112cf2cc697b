import Crypto
import Foundation
import HummingbirdTLS
import NIOSSL
import SwiftASN1
import X509

extension AppleStandIn {
    /// A self-signed server certificate for `localhost` and 127.0.0.1, made fresh per run:
    /// what a man in the middle would present, and what no trust store contains.
    struct SelfSignedIdentity {
        let certificateDER: [UInt8]
        let privateKeyPEM: String

        static func make() throws -> SelfSignedIdentity {
            let key = P256.Signing.PrivateKey()
            let name = try DistinguishedName {
                CommonName("localhost")
                OrganizationName("StoreGate Apple stand-in")
            }
            let now = Date()
            let certificate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: .init(key.publicKey),
                notValidBefore: now.addingTimeInterval(-3600),
                notValidAfter: now.addingTimeInterval(86_400),
                issuer: name,
                subject: name,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    // Shaped like `openssl req -x509`: its own issuer, so it may be a trust anchor.
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
                    try ExtendedKeyUsage([.serverAuth])
                    SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
                },
                issuerPrivateKey: .init(key)
            )
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return SelfSignedIdentity(certificateDER: serializer.serializedBytes, privateKeyPEM: key.pemRepresentation)
        }

        func serverConfiguration() throws -> TLSConfiguration {
            let certificate = try NIOSSLCertificate(bytes: certificateDER, format: .der)
            let key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
            return TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        }
    }
}
