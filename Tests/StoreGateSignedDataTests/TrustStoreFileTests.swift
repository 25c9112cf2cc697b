import Foundation
import StoreGateCore
import StoreGateTestSupport
import Testing

@Suite("Trust-directory files")
struct TrustStoreFileTests {
    static func pem(_ der: [UInt8]) -> [UInt8] {
        let base64 = Base64.encode(der)
        var lines = ["-----BEGIN CERTIFICATE-----"]
        var rest = Substring(base64)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(64)))
            rest = rest.dropFirst(64)
        }
        lines.append("-----END CERTIFICATE-----")
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }

    @Test("a root as DER and as PEM (by name or by its first line) adds the same opt-in anchor")
    func derAndPEM() throws {
        let root = try TestCertificateAuthority.shared(.p256).root
        var der = TrustStore()
        try der.addCertificateFile(named: "root.cer", contents: root.der)
        var pem = TrustStore()
        try pem.addCertificateFile(named: "root.pem", contents: Self.pem(root.der))
        var sniffed = TrustStore()
        try sniffed.addCertificateFile(named: "root.crt", contents: Self.pem(root.der))
        #expect(der.anchorFingerprints == [root.fingerprint])
        #expect(pem.anchorFingerprints == der.anchorFingerprints)
        #expect(sniffed.anchorFingerprints == der.anchorFingerprints)
        #expect(der.isOptInAnchor(root.fingerprint))
    }

    @Test("a file that is not a certificate is refused", arguments: [
        ("empty.der", [UInt8]()),
        ("garbage.der", [0x30, 0x03, 0x02, 0x01]),
        ("bad.pem", Array("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n".utf8)),
        ("key.pem", Array("-----BEGIN PUBLIC KEY-----\nMAA=\n-----END PUBLIC KEY-----\n".utf8)),
    ])
    func refused(name: String, contents: [UInt8]) {
        var store = TrustStore()
        #expect(throws: ChainError(.malformedCertificate, reason: "")) {
            try store.addCertificateFile(named: name, contents: contents)
        }
        #expect(store.anchorFingerprints.isEmpty)
    }

    @Test("load(directory:) reads each certificate file, skips other names, and names a bad file")
    func loadDirectory() throws {
        let root = try TestCertificateAuthority.shared(.rsa2048).root
        let directory = try TemporaryFiles.directory("trust")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(Self.pem(root.der)).write(to: directory.appendingPathComponent("root.pem"))
        try Data("not a certificate".utf8).write(to: directory.appendingPathComponent("README.txt"))
        let store = try TrustStore.load(directory: directory.path)
        #expect(store.anchorFingerprints == [root.fingerprint])

        try Data([0x30, 0x00]).write(to: directory.appendingPathComponent("broken.der"))
        let error = #expect(throws: ChainError(.malformedCertificate, reason: "")) {
            try TrustStore.load(directory: directory.path)
        }
        #expect(error?.reason.hasPrefix("broken.der: ") == true)
    }
}
