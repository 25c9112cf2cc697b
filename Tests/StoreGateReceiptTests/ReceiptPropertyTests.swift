import Foundation
import PropertyBased
import StoreGateCore
import StoreGateReceipt
import StoreGateTestSupport
import Testing

@Suite("Receipt properties")
struct ReceiptPropertyTests {
    static let text = Gen.character(in: " "..."\u{24FF}").string(of: 1...24)
    // Within the test CA's validity (2010-2100): the chain is checked at the creation date.
    static let date = Gen.int(in: 1_262_304_000...4_102_444_700).map { Date(timeIntervalSince1970: Double($0)) }

    @Test("mint then decode returns the same values, for arbitrary field values")
    func roundTrip() async throws {
        let authority = try TestCertificateAuthority.shared(.rsa2048)
        let minter = ReceiptMinter(authority: authority)
        let verifier = ReceiptVerifier(chainVerifier: CertificateChainVerifier(trustStore: try authority.trustStore()))
        await propertyCheck(
            count: 150,
            input: Self.text, Self.text, Self.date, Self.text.array(of: 0...6), Gen.int64(in: 0...Int64.max), Gen.int(in: -50_000...50_000)
        ) { bundleId, version, created, productIds, lineItem, offset in
            var payload = ReceiptMinter.Payload()
            payload.bundleId = bundleId
            payload.appVersion = version
            payload.creationDate = created
            payload.dateStyle = offset % 2 == 0 ? .zulu : .offset(offset / 60 * 60)
            payload.purchases = productIds.enumerated().map { index, productId in
                var purchase = ReceiptMinter.Purchase(
                    productId: productId,
                    transactionId: "\(lineItem &+ Int64(index))",
                    purchaseDate: created.addingTimeInterval(Double(-index * 3600)),
                    quantity: Int64(index + 1),
                    subscriptionExpirationDate: index % 2 == 0 ? created.addingTimeInterval(86_400) : nil,
                    webOrderLineItemId: lineItem,
                    isTrialPeriod: index % 3 == 0
                )
                purchase.originalTransactionId = "orig-\(productId)"
                return purchase
            }
            do {
                let der = try minter.mint(payload, options: { var o = ReceiptMinter.Options(); o.digest = offset % 3 == 0 ? .sha1 : .sha256; return o }())
                let verified = try await verifier.verify(der, expecting: ReceiptExpectations(bundleId: bundleId, appVersion: version, environments: [.test]))
                let receipt = verified.receipt
                #expect(receipt.bundleId == bundleId)
                #expect(receipt.appVersion == version)
                #expect(receipt.creationDate == created)
                #expect(receipt.inAppPurchases.count == productIds.count)
                for (index, purchase) in receipt.inAppPurchases.enumerated() {
                    #expect(purchase.productId == productIds[index])
                    #expect(purchase.transactionId == "\(lineItem &+ Int64(index))")
                    #expect(purchase.originalTransactionId == "orig-\(productIds[index])")
                    #expect(purchase.quantity == index + 1)
                    #expect(purchase.purchaseDate == created.addingTimeInterval(Double(-index * 3600)))
                    #expect(purchase.subscriptionExpirationDate == (index % 2 == 0 ? created.addingTimeInterval(86_400) : nil))
                    #expect(purchase.webOrderLineItemId == lineItem)
                    #expect(purchase.isTrialPeriod == (index % 3 == 0))
                }
            } catch {
                Issue.record("round trip failed: \(error)")
            }
        }
    }

    /// A real receipt when the fixtures are present, a minted one otherwise.
    static func sampleReceipt() throws -> (bytes: [UInt8], bundleId: String, verifier: ReceiptVerifier) {
        if let bytes = Fixtures.bytes("receipts/kvitto-ios-sandbox-2015-05-23-sha1-1iap.der") {
            return (bytes, "com.cocoanetics.EmmiView", ReceiptVerifier())
        }
        let authority = try TestCertificateAuthority.shared(.rsa2048)
        let bytes = try ReceiptMinter(authority: authority).mint(MintedReceiptTests.payload())
        return (bytes, "com.example.app", ReceiptVerifier(chainVerifier: CertificateChainVerifier(trustStore: try authority.trustStore())))
    }

    @Test("a receipt truncated at every byte offset gives a typed error, never a crash")
    func truncation() async throws {
        let (bytes, bundleId, verifier) = try Self.sampleReceipt()
        let expectations = ReceiptExpectations(bundleId: bundleId, environments: [.production, .sandbox, .test])
        _ = try await verifier.verify(bytes, expecting: expectations)
        var refused = 0
        for length in 0..<bytes.count {
            if length % 64 == 0 { await Task.yield() }  // a long loop: leave the two-thread pool to other tests now and then
            do {
                _ = try await verifier.verify(Array(bytes[..<length]), expecting: expectations)
                Issue.record("a receipt truncated to \(length) bytes verified")
            } catch {
                refused += 1
                #expect([VerificationStep.input, .structure].contains(error.step), "truncated to \(length): \(error)")
            }
        }
        #expect(refused == bytes.count)
    }

    /// The bytes of `bytes` a flip may leave without effect, derived from the structure and
    /// the trust store: an embedded certificate the validated chain does not take from the
    /// receipt. When an opt-in anchor (the test CA) anchors the chain, the trust store supplies
    /// the root and the receipt's own copy of it is inert: the signature does not cover the
    /// certificate SET and chain building uses the store's certificate. When a pinned Apple
    /// root anchors it, that root is the embedded certificate itself, so nothing is inert.
    /// Every other byte (content, signer, algorithms and their parameters, versions, lengths,
    /// the leaf and intermediate) must make verification fail.
    static func inertRanges(in bytes: [UInt8], verified: VerifiedReceipt) throws -> [Range<Int>] {
        let used = verified.signer.anchor == .apple ? verified.signer.chain : verified.signer.chain.dropLast()
        let chain = Set(used.map(\.sha256))
        var ranges: [Range<Int>] = []
        for certificate in try UnverifiedReceipt(der: bytes).certificates where !chain.contains(Fingerprint(of: certificate).description) {
            ranges.append(try #require(bytes.firstRange(of: certificate)))
        }
        return ranges
    }

    /// Checks one flipped receipt against the property: refused with a typed error, or (only
    /// inside an inert range) verified to exactly the original receipt and chain.
    static func checkFlip(
        _ flipped: [UInt8], at offset: Int, inert: [Range<Int>], original: VerifiedReceipt,
        verifier: ReceiptVerifier, expectations: ReceiptExpectations
    ) async -> Bool {
        do {
            let verified = try await verifier.verify(flipped, expecting: expectations)
            let isInert = inert.contains { $0.contains(offset) }
            #expect(isInert, "a flip at \(offset), outside the inert certificate bytes, verified")
            #expect(verified.receipt == original.receipt && verified.signer.chain == original.signer.chain,
                    "a flip at \(offset) verified to a different receipt or chain")
            return false
        } catch {
            return true
        }
    }

    @Test("a flipped byte with any mask is refused with a typed error unless it lies in an embedded certificate the chain does not use")
    func byteFlips() async throws {
        let (bytes, bundleId, verifier) = try Self.sampleReceipt()
        let expectations = ReceiptExpectations(bundleId: bundleId, environments: [.production, .sandbox, .test])
        let original = try await verifier.verify(bytes, expecting: expectations)
        let inert = try Self.inertRanges(in: bytes, verified: original)
        await propertyCheck(count: 400, input: Gen.int(in: 0...(bytes.count - 1)), Gen.uint8(in: 1...255)) { offset, mask in
            var flipped = bytes
            flipped[offset] ^= mask
            _ = await Self.checkFlip(flipped, at: offset, inert: inert, original: original, verifier: verifier, expectations: expectations)
        }
    }

    @Test("every single byte flipped: refused unless it lies in an embedded certificate the chain does not use (none in a real receipt)")
    func everyByteFlipped() async throws {
        let (bytes, bundleId, verifier) = try Self.sampleReceipt()
        let expectations = ReceiptExpectations(bundleId: bundleId, environments: [.production, .sandbox, .test])
        let original = try await verifier.verify(bytes, expecting: expectations)
        let inert = try Self.inertRanges(in: bytes, verified: original)
        let inertCount = inert.reduce(0) { $0 + $1.count }
        if Fixtures.directory != nil {
            #expect(inert.isEmpty, "a real receipt's embedded root is its anchor: no byte is inert")
        } else {
            #expect(inert.count == 1, "the minted receipt's embedded root copy is the only inert part")
        }
        var refused = 0
        for offset in bytes.indices {
            if offset % 64 == 0 { await Task.yield() }  // a long loop: leave the two-thread pool to other tests now and then
            var flipped = bytes
            flipped[offset] ^= 0xFF
            if await Self.checkFlip(flipped, at: offset, inert: inert, original: original, verifier: verifier, expectations: expectations) {
                refused += 1
            }
        }
        #expect(refused >= bytes.count - inertCount)
    }
}
