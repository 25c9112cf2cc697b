import Foundation
import StoreGateCore
import StoreGateReceipt
import StoreGateTestSupport
import Testing

/// A caller's own check: a receipt may hold at most `maximum` in-app purchases.
struct PurchaseLimit: ReceiptExpectation {
    let maximum: Int
    var name: String { "purchase_limit" }

    func evaluate(_ claims: ReceiptClaims) -> ExpectationResult<ReceiptError> {
        let count = claims.receipt.inAppPurchases.count
        guard count <= maximum else {
            return .fails(ReceiptError(.expectationNotMet, field: name, reason: "\(count) purchases, at most \(maximum) allowed"), detail: "\(count) purchases")
        }
        return .holds("\(count) purchases")
    }
}

@Suite("Receipt expectations are small composable checks")
struct ReceiptExpectationChecksTests {
    static let builtIn = ["environment", "bundle_id", "app_version", "device_hash", "receipt_expiration", "transaction", "product"]

    let minter: ReceiptMinter
    let verifier: ReceiptVerifier

    init() throws {
        let authority = try TestCertificateAuthority.shared(.rsa2048)
        minter = ReceiptMinter(authority: authority)
        verifier = ReceiptVerifier(
            chainVerifier: CertificateChainVerifier(trustStore: try authority.trustStore()),
            now: { MintedReceiptTests.created.addingTimeInterval(60) })
    }

    @Test("the built-in checks run in a fixed order, then the caller's in the order added")
    func order() async throws {
        let expectations = MintedReceiptTests.expectations.adding(PurchaseLimit(maximum: 5))
        #expect(expectations.checks.map(\.name) == Self.builtIn + ["purchase_limit"])
        let verified = try await verifier.verify(try minter.mint(MintedReceiptTests.payload()), expecting: expectations)
        #expect(verified.checks.map(\.name) == Self.builtIn + ["purchase_limit"])
        #expect(verified.checks.last?.passed == true)
    }

    @Test("checks not asked for report passed == nil and never fail the verdict")
    func notAsked() async throws {
        let verified = try await verifier.verify(try minter.mint(MintedReceiptTests.payload()), expecting: MintedReceiptTests.expectations)
        let passed = Dictionary(uniqueKeysWithValues: verified.checks.map { ($0.name, $0.passed) })
        #expect(passed["environment"] == .some(true))
        #expect(passed["bundle_id"] == .some(true))
        for name in ["app_version", "device_hash", "receipt_expiration", "transaction", "product"] {
            #expect(passed[name] == .some(nil), "\(name)")
        }
    }

    @Test("a caller's check runs, and its failure is the verdict")
    func callerCheckFails() async throws {
        let receipt = try minter.mint(MintedReceiptTests.payload())  // two purchases
        let error = await #expect(throws: ReceiptError.self) {
            try await verifier.verify(receipt, expecting: MintedReceiptTests.expectations.adding(PurchaseLimit(maximum: 1)))
        }
        #expect(error?.code == .expectationNotMet)
        #expect(error?.field == "purchase_limit")
        #expect(error?.step == .expectations)
        var viaInitializer = ReceiptExpectations(bundleId: "com.example.app", environments: [.test], additional: [PurchaseLimit(maximum: 1)])
        await #expect(throws: ReceiptError(.expectationNotMet, reason: "")) { try await verifier.verify(receipt, expecting: viaInitializer) }
        viaInitializer.additional = []
        _ = try await verifier.verify(receipt, expecting: viaInitializer)
    }

    @Test("the first failure is the verdict; the report lists every check's result")
    func firstFailureWins() async throws {
        let receipt = try minter.mint(MintedReceiptTests.payload())
        var expectations = MintedReceiptTests.expectations.adding(PurchaseLimit(maximum: 1))
        expectations.bundleId = "com.example.other"
        expectations.productId = "absent"
        let report = await verifier.report(receipt, expecting: expectations)
        #expect(report.failure?.code == .bundleIdMismatch)
        let passed = Dictionary(uniqueKeysWithValues: report.checks.map { ($0.name, $0.passed) })
        #expect(passed["bundle_id"] == .some(false))
        #expect(passed["product"] == .some(false))
        #expect(passed["purchase_limit"] == .some(false))
        #expect(passed["device_hash"] == .some(nil))
    }

    @Test("a product expected in an absent transaction is not checked: the transaction check fails")
    func productOfAbsentTransaction() async throws {
        let receipt = try minter.mint(MintedReceiptTests.payload())
        var expectations = MintedReceiptTests.expectations
        expectations.transactionId = "999"
        expectations.productId = "coins.100"
        let report = await verifier.report(receipt, expecting: expectations)
        #expect(report.failure?.code == .transactionNotFound)
        #expect(report.checks.first { $0.name == "transaction" }?.passed == false)
        #expect(report.checks.first { $0.name == "product" }?.passed == nil)
    }

    @Test("a built-in check can be added again as a caller's own: a second product")
    func builtInAdded() async throws {
        let receipt = try minter.mint(MintedReceiptTests.payload())
        var expectations = MintedReceiptTests.expectations.adding(ReceiptExpectations.Product("coins.100"))
        expectations.productId = "pro.monthly"
        let verified = try await verifier.verify(receipt, expecting: expectations)
        #expect(verified.checks.filter { $0.name == "product" }.map(\.passed) == [true, true])
        let refused = await #expect(throws: ReceiptError.self) {
            try await verifier.verify(receipt, expecting: expectations.adding(ReceiptExpectations.Product("absent")))
        }
        #expect(refused?.code == .productNotFound)
    }
}
