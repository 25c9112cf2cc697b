import Crypto
import Foundation
import StoreGateCore
import StoreGateReceipt
import StoreGateTestSupport
import Testing
import _CryptoExtras
import X509

/// Receipts minted by the test CA: the positive shapes Apple produces and every attack.
@Suite("Minted receipts")
struct MintedReceiptTests {
    static let created = Date(timeIntervalSince1970: 1_700_000_000)

    let authority: TestCertificateAuthority
    let minter: ReceiptMinter
    let verifier: ReceiptVerifier

    init() throws {
        authority = try TestCertificateAuthority.shared(.rsa2048)
        minter = ReceiptMinter(authority: authority)
        verifier = ReceiptVerifier(chainVerifier: CertificateChainVerifier(trustStore: try authority.trustStore()), now: { Self.created.addingTimeInterval(60) })
    }

    static func payload() -> ReceiptMinter.Payload {
        var payload = ReceiptMinter.Payload()
        payload.bundleId = "com.example.app"
        payload.appVersion = "42"
        payload.creationDate = created
        payload.purchases = [
            .init(productId: "coins.100", transactionId: "1000000000000001", purchaseDate: created.addingTimeInterval(-3600), quantity: 3),
            .init(productId: "pro.monthly", transactionId: "1000000000000002", purchaseDate: created.addingTimeInterval(-7200),
                  subscriptionExpirationDate: created.addingTimeInterval(86_400 * 30), webOrderLineItemId: 1_000_000_054_042_695,
                  isTrialPeriod: true, isInIntroOfferPeriod: false, promotionalOfferId: "spring"),
        ]
        return payload
    }

    static let expectations = ReceiptExpectations(bundleId: "com.example.app", environments: [.test])

    @Test("a minted receipt verifies and is reported as Test, never as a store environment",
          arguments: [ReceiptMinter.Options.Digest.sha1, .sha256], [true, false])
    func verifies(digest: ReceiptMinter.Options.Digest, bare: Bool) async throws {
        var options = ReceiptMinter.Options()
        options.digest = digest
        options.bareRSAEncryption = bare
        let receipt = try minter.mint(Self.payload(), options: options)
        let verified = try await verifier.verify(receipt, expecting: Self.expectations)
        #expect(verified.environment == .test)
        #expect(verified.signer.anchor == .optIn)
        #expect(verified.digestAlgorithm == (digest == .sha1 ? .sha1 : .sha256))
        #expect(verified.receipt.inAppPurchases.count == 2)
        #expect(verified.transactions.map(\.transactionId) == ["1000000000000001", "1000000000000002"])
        #expect(verified.transactions.allSatisfy { $0.environment == .test && $0.source == .appReceipt })
    }

    @Test("Apple's encoding quirks are accepted: indefinite lengths, chunked content, unsorted certificates, signed attributes")
    func quirks() async throws {
        var options = ReceiptMinter.Options()
        options.indefiniteLengths = true
        options.contentChunkSize = 100
        options.unsortedCertificates = true
        let quirky = try minter.mint(Self.payload(), options: options)
        let verified = try await verifier.verify(quirky, expecting: Self.expectations)
        #expect(verified.receipt.inAppPurchases.count == 2)

        var attributes = ReceiptMinter.Options()
        attributes.signedAttributes = true
        _ = try await verifier.verify(try minter.mint(Self.payload(), options: attributes), expecting: Self.expectations)
    }

    @Test("signed attributes whose message digest does not match the content are refused")
    func wrongMessageDigest() async throws {
        var options = ReceiptMinter.Options()
        options.signedAttributes = true
        options.wrongMessageDigest = true
        let receipt = try minter.mint(Self.payload(), options: options)
        await #expect(throws: ReceiptError(.signedAttributesInvalid, reason: "")) {
            try await verifier.verify(receipt, expecting: Self.expectations)
        }
    }

    @Test("a receipt is refused when its test CA is not an enabled anchor, even with Apple's marker OIDs")
    func foreignRoot() async throws {
        let receipt = try minter.mint(Self.payload())
        await #expect(throws: ReceiptError(.chain(.untrustedRoot), reason: "")) {
            try await ReceiptVerifier().verify(receipt, expecting: ReceiptExpectations(bundleId: "com.example.app", environments: [.production, .sandbox, .test]))
        }
    }

    @Test("a self-signed certificate carrying both marker OIDs is refused")
    func selfSigned() async throws {
        let issued = try TestCertificateAuthority.selfSigned(keyKind: .rsa2048)
        let rogue = ReceiptMinter(authority: try TestCertificateAuthority.shared(.rsa2048, label: "Rogue"))
        // Sign with the self-signed key and embed only it.
        let content = ReceiptMinter.payloadDER(Self.payload())
        let receipt = try ReceiptMinter(authority: SelfSignedAuthority.wrap(issued, fallback: rogue.authority)).sign(content: content, certificates: [issued.der])
        await #expect(throws: ReceiptError(.chain(.untrustedRoot), reason: "")) {
            try await ReceiptVerifier().verify(receipt, expecting: ReceiptExpectations(bundleId: "com.example.app"))
        }
    }

    @Test("a receipt embedding a re-issued copy of the anchor's root (same name and key) verifies, reported with the anchor")
    func reissuedAnchorRoot() async throws {
        let reissued = try authority.reissuedRoot()
        let receipt = try ReceiptMinter(authority: authority.replacingRoot(with: reissued)).mint(Self.payload())
        let verified = try await verifier.verify(receipt, expecting: Self.expectations)
        #expect(verified.signer.chain.last?.sha256 == authority.root.fingerprint.description)
    }

    @Test("a chain ending in a foreign root that copies the anchor's name is refused as a forged root, not as a missing marker")
    func forgedRootCopyingTheName() async throws {
        var shape = TestCertificateAuthority.Shape(label: authority.shape.label)  // the trusted names, other keys
        shape.leafHasMarker = false
        shape.intermediateHasMarker = false
        let forger = try TestCertificateAuthority(keyKind: .rsa2048, shape: shape)
        #expect(forger.root.certificate.subject == authority.root.certificate.subject)
        for embedded in [forger, forger.replacingRoot(with: authority.root)] {
            let receipt = try ReceiptMinter(authority: embedded).mint(Self.payload())
            let error = await #expect(throws: ReceiptError.self) { try await verifier.verify(receipt, expecting: Self.expectations) }
            #expect(error?.code == .chain(.untrustedRoot))
            #expect(error?.reason.contains("forged root") == true)
        }
    }

    @Test("a receipt must name one of the accepted app versions, and a requested version must be one of them")
    func acceptedAppVersions() async throws {
        let receipt = try minter.mint(Self.payload())  // version 42
        var expectations = Self.expectations
        expectations.acceptedAppVersions = ["41", "42"]
        let verified = try await verifier.verify(receipt, expecting: expectations)
        #expect(verified.checks.first { $0.name == "app_version" }?.passed == true)
        expectations.acceptedAppVersions = ["43"]
        let refused = await #expect(throws: ReceiptError.self) { try await verifier.verify(receipt, expecting: expectations) }
        #expect(refused?.code == .appVersionMismatch)
        expectations.acceptedAppVersions = ["41"]
        expectations.appVersion = "42"
        let outside = await #expect(throws: ReceiptError.self) { try await verifier.verify(receipt, expecting: expectations) }
        #expect(outside?.code == .appVersionMismatch)
    }

    @Test("an intermediate without the WWDR marker is refused")
    func intermediateWithoutMarker() async throws {
        var shape = TestCertificateAuthority.Shape(label: "No WWDR Marker")
        shape.intermediateHasMarker = false
        let ca = try TestCertificateAuthority(keyKind: .rsa2048, shape: shape)
        let receipt = try ReceiptMinter(authority: ca).mint(Self.payload())
        let verifier = ReceiptVerifier(chainVerifier: CertificateChainVerifier(trustStore: try ca.trustStore()))
        await #expect(throws: ReceiptError(.chain(.intermediateMarkerMissing), reason: "")) {
            try await verifier.verify(receipt, expecting: Self.expectations)
        }
    }

    @Test("a leaf without the receipt-signing marker is refused")
    func leafWithoutMarker() async throws {
        var shape = TestCertificateAuthority.Shape(label: "No Leaf Marker")
        shape.leafHasMarker = false
        let ca = try TestCertificateAuthority(keyKind: .rsa2048, shape: shape)
        let receipt = try ReceiptMinter(authority: ca).mint(Self.payload())
        let verifier = ReceiptVerifier(chainVerifier: CertificateChainVerifier(trustStore: try ca.trustStore()))
        await #expect(throws: ReceiptError(.chain(.leafMarkerMissing), reason: "")) {
            try await verifier.verify(receipt, expecting: Self.expectations)
        }
    }

    @Test("a leaf not yet valid at the creation date is refused")
    func leafNotValidAtCreation() async throws {
        var shape = TestCertificateAuthority.Shape(label: "Late Leaf")
        shape.leafValidity = Self.created.addingTimeInterval(86_400)...Self.created.addingTimeInterval(86_400 * 365)
        let ca = try TestCertificateAuthority(keyKind: .rsa2048, shape: shape)
        let receipt = try ReceiptMinter(authority: ca).mint(Self.payload())
        let verifier = ReceiptVerifier(chainVerifier: CertificateChainVerifier(trustStore: try ca.trustStore()))
        await #expect(throws: ReceiptError(.chain(.notValidAtSigningTime), reason: "")) {
            try await verifier.verify(receipt, expecting: Self.expectations)
        }
    }

    @Test("a payload altered after signing is refused")
    func alteredPayload() async throws {
        let receipt = try minter.mint(Self.payload())
        // Change "coins.100" to "coins.900" inside the signed content.
        let needle = Array("coins.100".utf8)
        let position = try #require(receipt.firstRange(of: needle))
        var altered = receipt
        altered[position.lowerBound + 6] = UInt8(ascii: "9")
        await #expect(throws: ReceiptError(.signatureInvalid, reason: "")) {
            try await verifier.verify(altered, expecting: Self.expectations)
        }
    }

    @Test("a signature by another key is refused")
    func otherKey() async throws {
        let otherKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let receipt = try minter.sign(content: ReceiptMinter.payloadDER(Self.payload()), signingKey: otherKey)
        await #expect(throws: ReceiptError(.signatureInvalid, reason: "")) {
            try await verifier.verify(receipt, expecting: Self.expectations)
        }
    }

    @Test("wrong bundle id, app version, device, product or transaction is refused with its own code")
    func expectationMismatches() async throws {
        var payload = Self.payload()
        let device = UUID()
        payload.deviceIdentifier = DeviceIdentifier.identifierForVendor(device).bytes
        let receipt = try minter.mint(payload)

        var ok = Self.expectations
        ok.appVersion = "42"
        ok.device = .identifierForVendor(device)
        ok.transactionId = "1000000000000002"
        ok.productId = "pro.monthly"
        let verified = try await verifier.verify(receipt, expecting: ok)
        #expect(verified.checks.first { $0.name == "device_hash" }?.passed == true)

        let cases: [(ReceiptExpectations, ReceiptError.Code)] = [
            ({ var e = ok; e.bundleId = "com.example.other"; return e }(), .bundleIdMismatch),
            ({ var e = ok; e.appVersion = "43"; return e }(), .appVersionMismatch),
            ({ var e = ok; e.device = .identifierForVendor(UUID()); return e }(), .deviceHashMismatch),
            ({ var e = ok; e.transactionId = "999"; return e }(), .transactionNotFound),
            ({ var e = ok; e.productId = "coins.100"; return e }(), .productNotFound),
            ({ var e = ok; e.transactionId = nil; e.productId = "absent"; return e }(), .productNotFound),
            ({ var e = ok; e.environments = [.production, .sandbox]; return e }(), .environmentNotAccepted),
        ]
        for (expectations, code) in cases {
            await #expect(throws: ReceiptError(code, reason: "")) {
                try await verifier.verify(receipt, expecting: expectations)
            }
        }
    }

    @Test("a macOS receipt checks the device hash with a 6-byte MAC address")
    func macAddress() async throws {
        let mac: [UInt8] = [0x00, 0x1B, 0x63, 0x84, 0x45, 0xE6]
        var payload = Self.payload()
        payload.deviceIdentifier = mac
        let receipt = try minter.mint(payload)
        var expectations = Self.expectations
        expectations.device = DeviceIdentifier.macAddress(mac)
        _ = try await verifier.verify(receipt, expecting: expectations)
        expectations.device = DeviceIdentifier.macAddress([0, 0, 0, 0, 0, 1])
        await #expect(throws: ReceiptError(.deviceHashMismatch, reason: "")) {
            try await verifier.verify(receipt, expecting: expectations)
        }
    }

    @Test("an expired receipt (field 21 in the past) is refused")
    func expiredReceipt() async throws {
        var payload = Self.payload()
        payload.expirationDate = Self.created.addingTimeInterval(30)
        let receipt = try minter.mint(payload)
        await #expect(throws: ReceiptError(.receiptExpired, reason: "")) {
            try await verifier.verify(receipt, expecting: Self.expectations)
        }
        var future = Self.payload()
        future.expirationDate = Self.created.addingTimeInterval(3600)
        _ = try await verifier.verify(try minter.mint(future), expecting: Self.expectations)
    }

    @Test("input over the size limit is refused before parsing")
    func sizeLimit() async throws {
        let receipt = try minter.mint(Self.payload())
        let small = ReceiptVerifier(chainVerifier: verifier.chainVerifier, limits: Limits(maxReceiptBytes: receipt.count - 1))
        await #expect(throws: ReceiptError(.tooLarge, reason: "")) {
            try await small.verify(receipt, expecting: Self.expectations)
        }
        await #expect(throws: ReceiptError(.tooLarge, reason: "")) {
            try await small.verify(base64: Base64.encode(receipt + Array(repeating: 0, count: receipt.count)), expecting: Self.expectations)
        }
    }

    @Test("a second bundle id attribute is refused, not resolved either way")
    func duplicateBundleId() async throws {
        var payload = Self.payload()
        payload.extraAttributes = [.init(type: 2, value: DERBuilder.utf8String("com.attacker.app"))]
        let receipt = try minter.mint(payload)
        await #expect(throws: ReceiptError(.duplicateField, reason: "")) {
            try await verifier.verify(receipt, expecting: Self.expectations)
        }
    }

    @Test("required fields missing from the payload are named")
    func missingFields() async throws {
        var payload = Self.payload()
        payload.creationDate = nil
        await #expect(throws: ReceiptError(.missingField, reason: "")) {
            try await verifier.verify(try minter.mint(payload), expecting: Self.expectations)
        }
        var purchase = Self.payload()
        purchase.purchases[0].productId = nil
        let receipt = try minter.mint(purchase)
        do {
            _ = try await verifier.verify(receipt, expecting: Self.expectations)
            Issue.record("a purchase without a product id verified")
        } catch {
            #expect(error.code == .missingField)
            #expect(error.field == "product_id (1702)")
        }
    }

    @Test("dates with numeric offsets decode to the same instant", arguments: [0, 3600, -25_200, 19_800])
    func offsets(_ offset: Int) async throws {
        var payload = Self.payload()
        payload.dateStyle = offset == 0 ? .zulu : .offset(offset)
        let verified = try await verifier.verify(try minter.mint(payload), expecting: Self.expectations)
        #expect(verified.receipt.creationDate == Self.created)
        #expect(verified.receipt.inAppPurchases[1].subscriptionExpirationDate == Self.created.addingTimeInterval(86_400 * 30))
    }

    @Test("an empty date means absent; a malformed one is refused")
    func emptyAndBadDates() async throws {
        var payload = Self.payload()
        payload.expirationDate = nil
        payload.extraAttributes = [.init(type: 21, value: DERBuilder.ia5String(""))]
        let verified = try await verifier.verify(try minter.mint(payload), expecting: Self.expectations)
        #expect(verified.receipt.expirationDate == nil)

        payload.extraAttributes = [.init(type: 21, value: DERBuilder.ia5String("2024-13-01T00:00:00Z"))]
        await #expect(throws: ReceiptError(.invalidDate, reason: "")) {
            try await verifier.verify(try minter.mint(payload), expecting: Self.expectations)
        }
    }

    @Test("unknown attribute numbers are kept by number")
    func unknownAttributes() throws {
        var payload = Self.payload()
        payload.extraAttributes = [.init(type: 25, version: 2, value: [1, 2, 3]), .init(type: 99_999, value: [])]
        payload.purchases[0].extraAttributes = [.init(type: 1722, value: DERBuilder.integer(7))]
        let decoded = try UnverifiedReceipt(der: try minter.mint(payload))
        #expect(decoded.receipt.unknownAttributes.contains(ReceiptAttribute(type: 25, version: 2, value: [1, 2, 3])))
        #expect(decoded.receipt.unknownAttributes.contains(ReceiptAttribute(type: 99_999, version: 1, value: [])))
        #expect(decoded.receipt.inAppPurchases[0].unknownAttributes == [ReceiptAttribute(type: 1722, version: 1, value: DERBuilder.integer(7))])
    }
}

/// Wraps a lone self-signed certificate as an "authority" whose leaf is that certificate.
enum SelfSignedAuthority {
    static func wrap(_ issued: TestCertificateAuthority.Issued, fallback: TestCertificateAuthority) -> TestCertificateAuthority {
        fallback.replacingLeaf(with: issued)
    }
}
