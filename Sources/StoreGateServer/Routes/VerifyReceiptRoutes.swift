import Crypto
import Foundation
import Hummingbird
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateReceipt

extension Endpoints {
    /// Every environment a receipt can report; the drop-in accepts them all at verification
    /// and maps the ones not configured to Apple's 21007/21008.
    private static let everyEnvironment: Set<AppStoreEnvironment> = [.production, .sandbox, .xcode, .localTesting, .test]

    /// `POST /verifyReceipt`: Apple's legacy endpoint, answered offline from the receipt.
    ///
    /// Same request (`receipt-data`, `password`, `exclude-old-transactions`) and reply
    /// (`status`, `environment`, `receipt`, `latest_receipt_info`, `latest_receipt`), HTTP 200
    /// with a status code as Apple does: 0 valid; 21002 malformed; 21003 not authentic (also:
    /// another app's receipt, a version not accepted); 21004 the `password` is not the
    /// configured shared secret; 21007 a sandbox receipt while only production is accepted;
    /// 21008 a production receipt while only the sandbox is accepted.
    ///
    /// Authentication: an API key with the `verifyreceipt` permission, or, without an
    /// `Authorization` header, a `password` equal to the configured shared secret.
    @Sendable func verifyReceiptLegacy(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        var hasKey = false
        if request.headers[.authorization] != nil {
            let key = try await keys.authenticate(request)
            try keys.checkRate(key)
            guard key.permissions.contains(.verifyReceipt) else { throw APIError.forbidden(.verifyReceipt) }
            hasKey = true
        }
        let body = try await JSONRequest.body(request, limit: configuration.maxBodyBytes)
        let input = LegacyRequest(body)
        // Apple's rule: a password that is not the shared secret is 21004. Without a key, the
        // shared secret is what authenticates the request.
        if let sharedSecret = configuration.sharedSecret {
            if let password = input.password, !Self.secretsMatch(password, sharedSecret.value) {
                return JSONReply.response(VerifyReceiptResponse(status: .sharedSecretMismatch))
            }
            if input.password == nil, !hasKey {
                return JSONReply.response(VerifyReceiptResponse(status: .sharedSecretMismatch))
            }
        } else if !hasKey {
            throw APIError.unauthorized("send an API key (Authorization: Bearer <key>), or configure STOREGATE_SHARED_SECRET and send it as 'password'")
        }
        let start = DispatchTime.now().uptimeNanoseconds
        let reply = await legacyReply(input)
        metrics.verification("verify_receipt", reply.status == .valid ? .valid : .invalid, nanoseconds: DispatchTime.now().uptimeNanoseconds &- start)
        return JSONReply.response(reply)
    }

    /// `GET /verifyReceipt` gets Apple's 21000 ("not a POST").
    @Sendable func verifyReceiptWrongMethod(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        JSONReply.response(VerifyReceiptResponse(status: .notPost))
    }

    /// Apple's request members, read as leniently as Apple reads them.
    struct LegacyRequest {
        var receiptData: String?
        var password: String?
        var excludeOldTransactions = false

        init(_ body: ByteBuffer) {
            let parsed: Any
            do {
                parsed = try body.withUnsafeReadableBytes { try JSONSerialization.jsonObject(with: Data($0)) }
            } catch {
                return
            }
            guard let object = parsed as? [String: Any] else { return }
            receiptData = object["receipt-data"] as? String
            password = object["password"] as? String
            excludeOldTransactions = (object["exclude-old-transactions"] as? Bool) ?? ((object["exclude-old-transactions"] as? String) == "true")
        }
    }

    /// The drop-in's reply: Apple's verifyReceipt reply, written by the same writer as a reply
    /// from Apple written back (``VerifyReceiptResponse``).
    private func legacyReply(_ input: LegacyRequest) async -> VerifyReceiptResponse {
        guard let receiptData = input.receiptData, !receiptData.isEmpty else {
            return VerifyReceiptResponse(status: .malformedReceiptData)
        }
        let verified: VerifiedReceipt
        do throws(APIError) {
            var request = ProofVerification.ReceiptRequest(environments: Self.everyEnvironment)
            request.rejectsExpiredReceipt = false
            verified = try await verification.verifyReceipt(base64: receiptData, request)
        } catch {
            return VerifyReceiptResponse(status: Self.legacyStatus(error))
        }
        guard verification.environments.contains(verified.environment) else {
            switch verified.environment {
            case .sandbox: return VerifyReceiptResponse(status: .sandboxReceiptSentToProduction)
            case .production: return VerifyReceiptResponse(status: .productionReceiptSentToSandbox)
            default: return VerifyReceiptResponse(status: .notAuthenticated)
            }
        }
        let receipt = verified.receipt
        let subscriptions = receipt.inAppPurchases.filter { $0.subscriptionExpirationDate != nil }
        var latest: [InAppPurchase]?
        if !subscriptions.isEmpty {
            var entries = subscriptions.sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
            if input.excludeOldTransactions {
                var newest: [String: InAppPurchase] = [:]
                for entry in entries {
                    newest[entry.originalTransactionId ?? entry.transactionId] = entry
                }
                entries = newest.values.sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
            }
            latest = entries
        }
        return VerifyReceiptResponse(
            status: .valid,
            environment: verified.environment,
            receipt: VerifyReceiptReceipt(receipt, requestDate: now()),
            latestReceiptInfo: latest?.map(VerifyReceiptTransaction.init) ?? [],
            latestReceipt: latest == nil ? nil : receiptData
        )
    }

    /// Apple's status for a refused receipt: 21002 when it cannot be read, 21003 otherwise.
    static func legacyStatus(_ error: APIError) -> VerifyReceiptStatus {
        switch error.step {
        case VerificationStep.input.rawValue, VerificationStep.structure.rawValue, VerificationStep.payload.rawValue:
            return .malformedReceiptData
        default:
            return .notAuthenticated
        }
    }

    /// Compares two secrets in constant time (their SHA-256 digests).
    static func secretsMatch(_ presented: String, _ configured: String) -> Bool {
        SHA256.hash(data: Array(presented.utf8)) == SHA256.hash(data: Array(configured.utf8))
    }
}

extension Endpoints {
    /// Apple's legacy `/verifyReceipt`, answered offline (its own key or shared secret).
    var legacyRoutes: [Route] {
        [
            Route(.get, "/verifyReceipt", .open, verifyReceiptWrongMethod),
            Route(.post, "/verifyReceipt", .open, verifyReceiptLegacy),
        ]
    }
}
