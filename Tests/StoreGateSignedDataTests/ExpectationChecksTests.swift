import Foundation
import StoreGateCore
import StoreGateSignedData
import StoreGateTestSupport
import Testing

/// A caller's own check: every product the proof names is one the app sells.
struct ProductCatalog: SignedDataExpectation {
    let catalog: Set<String>
    var name: String { "product_catalog" }

    func evaluate(_ claims: SignedDataClaims) -> ExpectationResult<SignedDataError> {
        guard let unknown = claims.productIds.first(where: { !catalog.contains($0) }) else {
            return .holds("every product is sold")
        }
        return .fails(SignedDataError(.expectationNotMet, field: name, reason: "\(unknown) is not sold"), detail: unknown)
    }
}

@Suite("Signed data expectations are small composable checks, one list for every kind")
struct ExpectationChecksTests {
    static let builtIn = ["bundle_id", "environment", "app_apple_id", "max_age", "nested_data", "product", "transaction"]

    let minter: JWSMinter
    let verifier: SignedDataVerifier

    init() throws {
        minter = try SignedDataTesting.minter()
        verifier = try SignedDataTesting.verifier()
    }

    func expectations(
        bundleId: String = SignedDataTesting.bundleId,
        appAppleId: Int64? = nil,
        productId: String? = nil,
        transactionId: String? = nil
    ) -> SignedDataExpectations {
        SignedDataExpectations(bundleId: bundleId, environments: [.test], appAppleId: appAppleId, productId: productId, transactionId: transactionId)
    }

    /// Each check's `passed`, by name.
    func passed(_ report: SignedDataVerificationReport) -> [String: Bool?] {
        Dictionary(uniqueKeysWithValues: report.checks.map { ($0.name, $0.passed) })
    }

    @Test("the built-in checks run in a fixed order, then the caller's in the order added")
    func order() async throws {
        let expectations = expectations().adding(ProductCatalog(catalog: ["com.example.storegate.monthly"]))
        #expect(expectations.checks.map(\.name) == Self.builtIn + ["product_catalog"])
        let jws = try minter.mint(json: JWSPayloads.transaction())
        let report = await verifier.report(bytes: Array(jws.utf8), as: .signedTransaction, expecting: expectations)
        #expect(report.isValid)
        #expect(report.checks.map(\.name) == Self.builtIn + ["product_catalog"])
        #expect(report.checks.last?.passed == true)
    }

    @Test("a signed transaction: bundle id and environment hold, the rest is not asked for and never fails")
    func transaction() async throws {
        let jws = try minter.mint(json: JWSPayloads.transaction())
        let report = await verifier.report(bytes: Array(jws.utf8), as: .signedTransaction, expecting: expectations(appAppleId: 42))
        #expect(report.isValid)
        let passed = passed(report)
        #expect(passed["bundle_id"] == .some(true))
        #expect(passed["environment"] == .some(true))
        for name in ["app_apple_id", "max_age", "nested_data", "product", "transaction"] {
            #expect(passed[name] == .some(nil), "\(name)")
        }
    }

    @Test("a renewal info names no bundle id: the bundle id is not checked; it names no transaction either")
    func renewalInfo() async throws {
        let jws = Array(try minter.mint(json: JWSPayloads.renewalInfo()).utf8)
        let report = await verifier.report(bytes: jws, as: .signedRenewalInfo, expecting: expectations(bundleId: "com.example.other", productId: "com.example.storegate.monthly"))
        #expect(report.isValid)
        #expect(passed(report)["bundle_id"] == .some(nil))
        #expect(passed(report)["product"] == .some(true))
        let asTransaction = await verifier.report(bytes: jws, as: .signedRenewalInfo, expecting: expectations(transactionId: "2000000100000001"))
        #expect(asTransaction.failure?.code == .transactionMismatch)
        #expect(passed(asTransaction)["transaction"] == .some(false))
    }

    @Test("an app transaction names no product or transaction, so it fails both when they are asked for")
    func appTransactionPurchase() async throws {
        let jws = Array(try minter.mint(json: JWSPayloads.appTransaction()).utf8)
        let product = await verifier.report(bytes: jws, as: .appTransaction, expecting: expectations(productId: "com.example.storegate.monthly"))
        #expect(product.failure?.code == .productMismatch)
        let transaction = await verifier.report(bytes: jws, as: .appTransaction, expecting: expectations(transactionId: "2000000100000001"))
        #expect(transaction.failure?.code == .transactionMismatch)
        let both = await verifier.report(bytes: jws, as: .appTransaction, expecting: expectations(productId: "p", transactionId: "t"))
        #expect(both.failure?.code == .productMismatch)
        #expect(passed(both)["product"] == .some(false))
        #expect(passed(both)["transaction"] == .some(false))
        let neither = await verifier.report(bytes: jws, as: .appTransaction, expecting: expectations())
        #expect(neither.isValid)
        #expect(passed(neither)["app_apple_id"] == .some(nil))
    }

    @Test("a production app transaction without an expected appAppleId fails app_apple_id_required")
    func productionAppTransaction() async throws {
        let jws = Array(try minter.mint(json: JWSPayloads.appTransaction(receiptType: "Production", appAppleId: 1_234_567_890)).utf8)
        let missing = await verifier.report(bytes: jws, as: .appTransaction, expecting: expectations())
        #expect(missing.failure?.code == .appAppleIdRequired)
        #expect(missing.failure?.field == "appAppleId")
        #expect(passed(missing)["app_apple_id"] == .some(false))
        let right = await verifier.report(bytes: jws, as: .appTransaction, expecting: expectations(appAppleId: 1_234_567_890))
        #expect(right.isValid)
        #expect(passed(right)["app_apple_id"] == .some(true))
    }

    @Test("a notification checks its nested data and its nested transaction's product and id")
    func notification() async throws {
        let payload = JWSPayloads.notification(
            signedTransactionInfo: try minter.mint(json: JWSPayloads.transaction()),
            signedRenewalInfo: try minter.mint(json: JWSPayloads.renewalInfo()))
        let jws = Array(try minter.mint(json: payload).utf8)
        let report = await verifier.report(
            bytes: jws, as: .notification,
            expecting: expectations(productId: "com.example.storegate.monthly", transactionId: "2000000100000001"))
        #expect(report.isValid)
        let passed = passed(report)
        for name in ["bundle_id", "environment", "nested_data", "product", "transaction"] {
            #expect(passed[name] == .some(true), "\(name)")
        }
        let other = await verifier.report(bytes: jws, as: .notification, expecting: expectations(transactionId: "2000000999999999"))
        #expect(other.failure?.code == .transactionMismatch)
        #expect(other.failure?.field == "data.signedTransactionInfo.transactionId")
    }

    @Test("a caller's check runs for every kind, and its failure is the verdict")
    func callerCheck() async throws {
        let sold = expectations().adding(ProductCatalog(catalog: ["com.example.storegate.monthly"]))
        let notSold = expectations().adding(ProductCatalog(catalog: ["com.example.storegate.yearly"]))
        let transaction = try minter.mint(json: JWSPayloads.transaction())
        _ = try await verifier.verifyTransaction(transaction, expecting: sold)
        let error = await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyTransaction(transaction, expecting: notSold) }
        #expect(error?.code == .expectationNotMet)
        #expect(error?.field == "product_catalog")
        #expect(error?.step == .expectations)
        let renewal = try minter.mint(json: JWSPayloads.renewalInfo())
        let renewalError = await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyRenewalInfo(renewal, expecting: notSold) }
        #expect(renewalError?.code == .expectationNotMet)
        let viaInitializer = SignedDataExpectations(
            bundleId: SignedDataTesting.bundleId, environments: [.test], additional: [ProductCatalog(catalog: [])])
        await #expect(throws: SignedDataError(.expectationNotMet, reason: "")) {
            _ = try await verifier.verify(bytes: Array(transaction.utf8), as: .signedTransaction, expecting: viaInitializer)
        }
    }

    @Test("a built-in failure comes first; the report still lists every result")
    func firstFailureWins() async throws {
        let jws = try minter.mint(json: JWSPayloads.transaction(bundleId: "com.attacker.app"))
        let expectations = expectations().adding(ProductCatalog(catalog: []))
        let report = await verifier.report(bytes: Array(jws.utf8), as: .signedTransaction, expecting: expectations)
        #expect(report.failure?.code == .bundleIdMismatch)
        #expect(passed(report)["bundle_id"] == .some(false))
        #expect(passed(report)["product_catalog"] == .some(false))
    }
}
