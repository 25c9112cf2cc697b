import Foundation
import Logging
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateHTTP
import StoreGateReceipt
import StoreGateSignedData
import StoreGateTestSupport

/// Short backoffs so failure tests end in milliseconds; long timeouts, because these tests
/// share two cores with the whole suite: a reply held up behind other tests' work must not
/// time out and be retried, which would change the attempt counts the tests check. The tests
/// of timeouts and deadlines set their own.
let quickRetries = RetryPolicy(
    maxAttempts: 3,
    initialBackoff: .milliseconds(5),
    maxBackoff: .milliseconds(20),
    jitter: 0.5,
    attemptTimeout: .seconds(60),
    totalDeadline: .seconds(120),
    maxRetryAfter: .seconds(5)
)

let quietLogger = Logger(label: "storegate.tests", factory: { _ in SwiftLogNoOpLogHandler() })

/// Runs `body` with a production transport (strict TLS, system trust store), shut down after.
func withTransport<T: Sendable>(
    configuration: AsyncHTTPClientTransport.Configuration = .init(connectTimeout: .seconds(10), readTimeout: .seconds(60)),
    trusting extraRoots: [[UInt8]] = [],
    _ body: (AsyncHTTPClientTransport) async throws -> T
) async throws -> T {
    let transport = extraRoots.isEmpty
        ? AsyncHTTPClientTransport(configuration: configuration, logger: quietLogger)
        : try AsyncHTTPClientTransport(configuration: configuration, additionalTrustRootsDER: extraRoots, logger: quietLogger)
    do {
        let result = try await body(transport)
        try await transport.shutdown()
        return result
    } catch {
        try await transport.shutdown()
        throw error
    }
}

/// Runs `body` with a stand-in and a verifyReceipt client pointing at it.
func withVerifyReceiptStandIn<T: Sendable>(
    retryPolicy: RetryPolicy = quickRetries,
    _ body: @Sendable (AppleStandIn, VerifyReceiptClient) async throws -> T
) async throws -> T {
    try await AppleStandIn.run { standIn in
        try await withTransport { transport in
            let client = VerifyReceiptClient(transport: transport, endpoints: standIn.verifyReceiptEndpoints, retryPolicy: retryPolicy, logger: quietLogger)
            return try await body(standIn, client)
        }
    }
}

/// Expects `body` to throw an ``AppStoreClientError`` and returns it.
func appStoreError<T>(_ body: () async throws -> T) async -> AppStoreClientError? {
    do {
        _ = try await body()
        return nil
    } catch let error as AppStoreClientError {
        return error
    } catch {
        return nil
    }
}

// MARK: verifyReceipt replies

let appBundleId = "com.example.storegate"

/// A reply for `appBundleId` holding purchase 1000000000000001 of `com.example.coins` (quantity 2)
/// and a subscription renewal.
func sampleReply(environment: AppStoreEnvironment = .sandbox, bundleId: String = appBundleId) -> VerifyReceiptResponse {
    let purchased = Date(timeIntervalSince1970: 1_600_000_000)
    return VerifyReceiptResponse(
        status: .valid,
        environment: environment,
        receipt: VerifyReceiptReceipt(
            receiptType: environment == .production ? "Production" : "ProductionSandbox",
            bundleId: bundleId,
            applicationVersion: "42",
            originalApplicationVersion: "1.0",
            receiptCreationDate: purchased,
            requestDate: purchased,
            inApp: [
                VerifyReceiptTransaction(quantity: 2, productId: "com.example.coins", transactionId: "1000000000000001", originalTransactionId: "1000000000000001", purchaseDate: purchased),
                VerifyReceiptTransaction(quantity: 1, productId: "com.example.monthly", transactionId: "1000000000000002", originalTransactionId: "1000000000000002", purchaseDate: purchased, expiresDate: purchased.addingTimeInterval(2_592_000)),
            ]
        ),
        latestReceiptInfo: [
            VerifyReceiptTransaction(quantity: 1, productId: "com.example.monthly", transactionId: "1000000000000003", originalTransactionId: "1000000000000002", purchaseDate: purchased.addingTimeInterval(2_592_000), expiresDate: purchased.addingTimeInterval(5_184_000)),
        ],
        pendingRenewalInfo: [VerifyReceiptPendingRenewal(autoRenewProductId: "com.example.monthly", autoRenewStatus: true, originalTransactionId: "1000000000000002", productId: "com.example.monthly")],
        latestReceipt: "TEFURVNU"
    )
}

let coinsPurchase = VerifyReceiptExpectation.Purchase(transactionId: "1000000000000001", productId: "com.example.coins", quantity: 2)
let coinsExpectation = VerifyReceiptExpectation(bundleId: appBundleId, purchase: coinsPurchase)

// MARK: signed payloads for the Server API

/// Mints StoreKit 2 payloads with the shared test CA, as the stand-in answers them.
struct SignedPayloads {
    let minter: JWSMinter
    let bundleId: String
    let environment: String

    init(minter: JWSMinter? = nil, bundleId: String = appBundleId, environment: String = "Sandbox") throws {
        self.minter = try minter ?? JWSMinter.shared()
        self.bundleId = bundleId
        self.environment = environment
    }

    static let signedDate: Int64 = 1_700_000_000_000

    func transaction(_ id: String, original: String? = nil, productId: String = "com.example.monthly", bundleId: String? = nil) throws -> String {
        try minter.mint(json: [
            "transactionId": id,
            "originalTransactionId": original ?? id,
            "bundleId": bundleId ?? self.bundleId,
            "productId": productId,
            "purchaseDate": Self.signedDate - 86_400_000,
            "originalPurchaseDate": Self.signedDate - 86_400_000,
            "quantity": 1,
            "type": "Auto-Renewable Subscription",
            "inAppOwnershipType": "PURCHASED",
            "signedDate": Self.signedDate,
            "environment": environment,
            "transactionReason": "PURCHASE",
            "storefront": "USA",
        ])
    }

    func renewal(original: String, productId: String = "com.example.monthly") throws -> String {
        try minter.mint(json: [
            "originalTransactionId": original,
            "productId": productId,
            "autoRenewProductId": productId,
            "autoRenewStatus": 1,
            "signedDate": Self.signedDate,
            "environment": environment,
            "recentSubscriptionStartDate": Self.signedDate - 86_400_000,
        ])
    }

    func notification(_ uuid: String, type: String = "DID_RENEW", transaction: String? = nil, signedDate: Int64 = Self.signedDate) throws -> String {
        var data: [String: Any] = ["bundleId": bundleId, "environment": environment, "bundleVersion": "42"]
        if let transaction { data["signedTransactionInfo"] = transaction }
        return try minter.mint(json: [
            "notificationType": type,
            "notificationUUID": uuid,
            "data": data,
            "version": "2.0",
            "signedDate": signedDate,
        ])
    }

    /// A verifier trusting the shared test CA (results reported as the `Test` environment).
    func verifier(expectedBundleId: String = appBundleId) throws -> SignedDataPayloadVerifier {
        let chainVerifier = CertificateChainVerifier(trustStore: try minter.authority.trustStore())
        return SignedDataPayloadVerifier(SignedDataVerifier(
            expectations: SignedDataExpectations(bundleId: expectedBundleId, environments: [.production, .sandbox, .test]),
            chainVerifier: chainVerifier
        ))
    }
}
