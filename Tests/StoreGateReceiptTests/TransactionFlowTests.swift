import Foundation
import StoreGateCore
import StoreGateReceipt
import StoreGateTestSupport
import Synchronization
import Testing

/// A receipt source that hands out scripted receipts and counts refreshes.
final class ScriptedSource: ReceiptSource {
    struct Failure: Error {}

    let current: Result<[UInt8], Failure>
    let refreshed: Result<[UInt8], Failure>
    let refreshes = Mutex(0)

    init(current: Result<[UInt8], Failure>, refreshed: Result<[UInt8], Failure>) {
        self.current = current
        self.refreshed = refreshed
    }

    func currentReceipt() async throws -> [UInt8] { try current.get() }

    func refreshedReceipt() async throws -> [UInt8] {
        refreshes.withLock { $0 += 1 }
        return try refreshed.get()
    }
}

@Suite("Verifying a transaction against the receipt, refreshing once")
struct TransactionFlowTests {
    let minter: ReceiptMinter
    let verifier: ReceiptVerifier
    let expectations = ReceiptExpectations(bundleId: "com.example.app", environments: [.test])

    init() throws {
        let authority = try TestCertificateAuthority.shared(.rsa2048)
        minter = ReceiptMinter(authority: authority)
        verifier = ReceiptVerifier(chainVerifier: CertificateChainVerifier(trustStore: try authority.trustStore()))
    }

    func receipt(with transactions: [String]) throws -> [UInt8] {
        var payload = MintedReceiptTests.payload()
        payload.purchases = transactions.map {
            .init(productId: "coins.100", transactionId: $0, purchaseDate: MintedReceiptTests.created)
        }
        return try minter.mint(payload)
    }

    @Test("a transaction already in the receipt verifies without a refresh")
    func verifiedFirstTime() async throws {
        let source = ScriptedSource(current: .success(try receipt(with: ["1", "2"])), refreshed: .failure(.init()))
        guard case .verified(_, let purchase) = await verifier.verifyTransaction("2", productId: "coins.100", from: source, expecting: expectations) else {
            Issue.record("expected verified")
            return
        }
        #expect(purchase.transactionId == "2")
        #expect(source.refreshes.withLock { $0 } == 0)
    }

    @Test("a transaction missing from a stale receipt verifies after one refresh")
    func verifiedAfterRefresh() async throws {
        let source = ScriptedSource(current: .success(try receipt(with: ["1"])), refreshed: .success(try receipt(with: ["1", "2"])))
        guard case .verified = await verifier.verifyTransaction("2", from: source, expecting: expectations) else {
            Issue.record("expected verified")
            return
        }
        #expect(source.refreshes.withLock { $0 } == 1)
    }

    @Test("a transaction missing after the refresh is invalid, with the reason")
    func invalidAfterRefresh() async throws {
        let source = ScriptedSource(current: .success(try receipt(with: ["1"])), refreshed: .success(try receipt(with: ["1"])))
        guard case .invalid(let error) = await verifier.verifyTransaction("2", from: source, expecting: expectations) else {
            Issue.record("expected invalid")
            return
        }
        #expect(error.code == .transactionNotFound)
        #expect(source.refreshes.withLock { $0 } == 1)
    }

    @Test("a forged refreshed receipt is invalid, not verified")
    func forgedRefresh() async throws {
        var forged = try receipt(with: ["2"])
        forged[forged.count - 10] ^= 0x01  // inside the signature
        let source = ScriptedSource(current: .success(try receipt(with: ["1"])), refreshed: .success(forged))
        guard case .invalid(let error) = await verifier.verifyTransaction("2", from: source, expecting: expectations) else {
            Issue.record("expected invalid")
            return
        }
        #expect(error.code == .signatureInvalid)
    }

    @Test("a source that cannot refresh gives could-not-verify, never invalid or verified")
    func couldNotVerify() async throws {
        let source = ScriptedSource(current: .success(try receipt(with: ["1"])), refreshed: .failure(.init()))
        guard case .couldNotVerify(let error) = await verifier.verifyTransaction("2", from: source, expecting: expectations) else {
            Issue.record("expected could not verify")
            return
        }
        #expect(error is ScriptedSource.Failure)

        let noReceipt = ScriptedSource(current: .failure(.init()), refreshed: .failure(.init()))
        guard case .couldNotVerify = await verifier.verifyTransaction("1", from: noReceipt, expecting: expectations) else {
            Issue.record("expected could not verify")
            return
        }
    }
}
