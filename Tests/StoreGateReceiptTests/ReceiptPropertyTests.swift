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

    @Test("single flipped bytes give a typed error or a verdict, and never pass inside the signed content")
    func byteFlips() async throws {
        let (bytes, bundleId, verifier) = try Self.sampleReceipt()
        let expectations = ReceiptExpectations(bundleId: bundleId, environments: [.production, .sandbox, .test])
        let content = try UnverifiedReceipt(der: bytes).receipt
        _ = content
        // Locate the signed payload: the first SET whose decoding yields the receipt.
        let payloadStart = try #require(Self.payloadRange(in: bytes))
        await propertyCheck(count: 400, input: Gen.int(in: 0...(bytes.count - 1)), Gen.uint8(in: 1...255)) { offset, mask in
            var flipped = bytes
            flipped[offset] ^= mask
            do {
                _ = try await verifier.verify(flipped, expecting: expectations)
                #expect(!payloadStart.contains(offset), "a flip at \(offset) inside the signed payload verified")
            } catch let error as ReceiptError {
                #expect(error.step != .expectations || !payloadStart.contains(offset))
            } catch {
                Issue.record("an untyped error: \(error)")
            }
        }
    }

    @Test("every single byte of a real receipt flipped: a typed error or a verdict, never a crash or hang, never a pass inside the payload")
    func everyByteFlipped() async throws {
        let (bytes, bundleId, verifier) = try Self.sampleReceipt()
        let expectations = ReceiptExpectations(bundleId: bundleId, environments: [.production, .sandbox, .test])
        let payload = try #require(Self.payloadRange(in: bytes))
        var refused = 0
        for offset in bytes.indices {
            if offset % 64 == 0 { await Task.yield() }  // a long loop: leave the two-thread pool to other tests now and then
            var flipped = bytes
            flipped[offset] ^= 0xFF
            do {
                _ = try await verifier.verify(flipped, expecting: expectations)
                #expect(!payload.contains(offset), "a flip at \(offset) inside the signed payload verified")
            } catch {
                refused += 1
            }
        }
        // Nearly every byte matters; the few that do not are unsigned encoding details
        // (such as the NULL parameters of algorithm identifiers).
        #expect(refused > bytes.count * 9 / 10)
    }

    /// Where the payload SET lies (the value of the eContent OCTET STRING).
    static func payloadRange(in bytes: [UInt8]) -> Range<Int>? {
        guard let payload = try? UnverifiedReceipt(der: bytes) else { return nil }
        _ = payload
        // The payload begins with 0x31 followed by its length; find the SET whose bytes
        // decode as the receipt by scanning for the bundle-id attribute's neighbourhood.
        for start in bytes.indices where bytes[start] == 0x31 && start + 4 < bytes.count {
            let lengthByte = bytes[start + 1]
            var length = 0
            var header = 2
            if lengthByte < 0x80 {
                length = Int(lengthByte)
            } else {
                let count = Int(lengthByte & 0x7F)
                guard count <= 3, start + 2 + count <= bytes.count else { continue }
                for index in 0..<count { length = length << 8 | Int(bytes[start + 2 + index]) }
                header += count
            }
            let end = start + header + length
            guard end <= bytes.count, length > 64 else { continue }
            if (try? AppReceipt(payload: Array(bytes[start..<end]))) != nil {
                return start..<end
            }
        }
        return nil
    }
}
