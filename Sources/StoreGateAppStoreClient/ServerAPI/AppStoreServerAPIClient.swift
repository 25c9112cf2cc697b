public import Foundation
public import Logging
public import StoreGateCore
public import StoreGateHTTP
public import StoreGateSignedData
import Tracing

/// Calls the App Store Server API, and verifies every signed payload it answers.
///
/// Each request carries a fresh-enough ES256 JWT from an ``AppStoreServerAPITokenProvider``
/// (cached, renewed before expiry). Transient failures are retried under the ``RetryPolicy``;
/// HTTP 429 waits until its `Retry-After` time when that fits the deadline. Apple's error
/// bodies become ``AppStoreClientError/Code/apiError`` with a typed ``AppStoreAPIErrorCode``.
/// Every `signedTransactionInfo`, `signedRenewalInfo`, `signedPayload` and
/// `signedAppTransactionInfo` is passed through the ``SignedPayloadVerifying`` before it is
/// returned, and every verified transaction, app transaction and notification must be for the
/// credentials' bundle id. Each request carries `User-Agent: StoreGate/<version>`; which
/// failures are retried is ``AppStoreClientError/isRetryable``'s rule.
public struct AppStoreServerAPIClient: Sendable {
    /// The environment Apple names.
    public let environment: AppStoreEnvironment
    /// The bundle id Apple names.
    public let bundleId: String
    private let baseURL: String
    private let transport: any HTTPTransport
    private let tokens: AppStoreServerAPITokenProvider
    let verifier: any SignedPayloadVerifying
    private let retryPolicy: RetryPolicy
    private let logger: Logger
    private let now: @Sendable () -> Date

    /// Creates a client for one environment.
    ///
    /// - Parameters:
    ///   - tokens: Signs and caches the JWTs (its credentials name the app).
    ///   - environment: ``AppStoreEnvironment/production`` or ``AppStoreEnvironment/sandbox``.
    ///   - endpoints: Apple's base URLs, or a stand-in's.
    ///   - transport: The HTTP transport.
    ///   - verifier: Verifies the signed payloads of each answer.
    ///   - retryPolicy: Attempts, backoff and the deadline of each call.
    ///   - logger: Receives debug-level events; never tokens, keys or signed payloads.
    ///   - now: The wall clock, for `Retry-After` times.
    /// - Throws: ``AppStoreClientError/Code/invalidConfiguration`` for another environment.
    public init(
        tokens: AppStoreServerAPITokenProvider,
        environment: AppStoreEnvironment,
        endpoints: AppStoreServerAPIEndpoints = .apple,
        transport: any HTTPTransport,
        verifier: any SignedPayloadVerifying,
        retryPolicy: RetryPolicy = .default,
        logger: Logger,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(AppStoreClientError) {
        guard let baseURL = endpoints.baseURL(for: environment) else {
            throw AppStoreClientError(.invalidConfiguration, reason: "the App Store Server API has production and sandbox, not \(environment)")
        }
        self.environment = environment
        self.bundleId = tokens.credentials.bundleId
        self.baseURL = baseURL
        self.transport = transport
        self.tokens = tokens
        self.verifier = verifier
        self.retryPolicy = retryPolicy
        self.logger = logger
        self.now = now
    }

    // MARK: Endpoints

    /// Get Transaction Info: `GET /inApps/v1/transactions/{transactionId}`.
    public func transactionInfo(transactionId: String) async throws(AppStoreClientError) -> VerifiedTransaction {
        let path = "/inApps/v1/transactions/" + (try Self.pathSegment(transactionId, name: "transaction id"))
        let wire = try await call(ServerAPIWire.TransactionInfoResponse.self, method: "GET", path: path)
        let transaction = try await verifyTransaction(wire.signedTransactionInfo)
        guard transaction.transactionId == transactionId || transaction.originalTransactionId == transactionId else {
            throw AppStoreClientError(.transactionNotFound, reason: "Apple's answer is for another transaction", environment: environment)
        }
        return transaction
    }

    /// Get Transaction History (v2), one page: `GET /inApps/v2/history/{transactionId}`.
    ///
    /// - Parameter revision: `nil` for the first page, then the previous page's ``TransactionPage/revision``.
    public func transactionHistory(
        transactionId: String,
        query: TransactionHistoryQuery = TransactionHistoryQuery(),
        revision: String? = nil
    ) async throws(AppStoreClientError) -> TransactionPage {
        let path = "/inApps/v2/history/" + (try Self.pathSegment(transactionId, name: "transaction id"))
        let wire = try await call(ServerAPIWire.HistoryResponse.self, method: "GET", path: path, query: query.items(revision: revision))
        try checkBundle(wire.bundleId)
        return TransactionPage(
            transactions: try await verifyTransactions(wire.signedTransactions ?? []),
            revision: wire.revision,
            hasMore: wire.hasMore ?? false,
            bundleId: wire.bundleId,
            appAppleId: wire.appAppleId,
            environment: wire.environment.map(AppStoreEnvironment.init(rawValue:))
        )
    }

    /// Get All Subscription Statuses: `GET /inApps/v1/subscriptions/{transactionId}`.
    ///
    /// - Parameter statuses: Only subscriptions in these statuses (all when empty).
    public func allSubscriptionStatuses(transactionId: String, statuses: [SubscriptionStatus] = []) async throws(AppStoreClientError) -> SubscriptionStatuses {
        let path = "/inApps/v1/subscriptions/" + (try Self.pathSegment(transactionId, name: "transaction id"))
        let wire = try await call(
            ServerAPIWire.StatusResponse.self, method: "GET", path: path,
            query: statuses.map { ("status", String($0.rawValue)) }
        )
        try checkBundle(wire.bundleId)
        var groups: [SubscriptionStatuses.Group] = []
        for item in wire.data ?? [] {
            var last: [SubscriptionStatuses.LastTransaction] = []
            for entry in item.lastTransactions ?? [] {
                var transaction: VerifiedTransaction?
                if let signed = entry.signedTransactionInfo {
                    transaction = try await verifyTransaction(signed)
                }
                var renewal: VerifiedRenewalInfo?
                if let signed = entry.signedRenewalInfo {
                    renewal = try await verifyRenewal(signed)
                }
                last.append(.init(
                    status: entry.status.map(SubscriptionStatus.init(rawValue:)),
                    originalTransactionId: entry.originalTransactionId,
                    transaction: transaction,
                    renewalInfo: renewal
                ))
            }
            groups.append(.init(subscriptionGroupIdentifier: item.subscriptionGroupIdentifier, lastTransactions: last))
        }
        return SubscriptionStatuses(
            environment: wire.environment.map(AppStoreEnvironment.init(rawValue:)),
            bundleId: wire.bundleId,
            appAppleId: wire.appAppleId,
            groups: groups
        )
    }

    /// Look Up Order ID: `GET /inApps/v1/lookup/{orderId}`.
    public func lookUpOrder(orderId: String) async throws(AppStoreClientError) -> OrderLookup {
        let path = "/inApps/v1/lookup/" + (try Self.pathSegment(orderId, name: "order id"))
        let wire = try await call(ServerAPIWire.OrderLookupResponse.self, method: "GET", path: path)
        return OrderLookup(status: wire.status, transactions: try await verifyTransactions(wire.signedTransactions ?? []))
    }

    /// Get Refund History (v2), one page: `GET /inApps/v2/refund/lookup/{transactionId}`.
    public func refundHistory(transactionId: String, revision: String? = nil) async throws(AppStoreClientError) -> TransactionPage {
        let path = "/inApps/v2/refund/lookup/" + (try Self.pathSegment(transactionId, name: "transaction id"))
        let wire = try await call(
            ServerAPIWire.RefundHistoryResponse.self, method: "GET", path: path,
            query: revision.map { [("revision", $0)] } ?? []
        )
        return TransactionPage(
            transactions: try await verifyTransactions(wire.signedTransactions ?? []),
            revision: wire.revision,
            hasMore: wire.hasMore ?? false,
            bundleId: nil,
            appAppleId: nil,
            environment: nil
        )
    }

    /// Get Notification History, one page: `POST /inApps/v1/notifications/history`.
    public func notificationHistory(_ query: NotificationHistoryQuery, paginationToken: String? = nil) async throws(AppStoreClientError) -> NotificationHistoryPage {
        let body: [UInt8]
        do {
            body = Array(try JSONEncoder().encode(query.wire))
        } catch {
            throw AppStoreClientError(.invalidRequest, reason: "the notification history query cannot be encoded")
        }
        let wire = try await call(
            ServerAPIWire.NotificationHistoryResponse.self, method: "POST", path: "/inApps/v1/notifications/history",
            query: paginationToken.map { [("paginationToken", $0)] } ?? [], body: body
        )
        let entries = wire.notificationHistory ?? []
        var payloads: [String] = []
        payloads.reserveCapacity(entries.count)
        for entry in entries {
            guard let signed = entry.signedPayload else {
                throw AppStoreClientError(.malformedReply, reason: "a notification history entry has no signedPayload", environment: environment)
            }
            payloads.append(signed)
        }
        // The page's payloads are verified concurrently (each is independent); any failure
        // refuses the whole page.
        let verified = try await verifyNotifications(payloads)
        let items = zip(verified, entries).map { notification, entry in
            NotificationHistoryItem(notification: notification, sendAttempts: (entry.sendAttempts ?? []).map(SendAttempt.init))
        }
        return NotificationHistoryPage(items: items, hasMore: wire.hasMore ?? false, paginationToken: wire.paginationToken)
    }

    /// Request a Test Notification: `POST /inApps/v1/notifications/test`. Returns the token
    /// for ``testNotificationStatus(token:)``.
    public func requestTestNotification() async throws(AppStoreClientError) -> String {
        let wire = try await call(ServerAPIWire.SendTestNotificationResponse.self, method: "POST", path: "/inApps/v1/notifications/test")
        return wire.testNotificationToken
    }

    /// Get Test Notification Status: `GET /inApps/v1/notifications/test/{testNotificationToken}`.
    public func testNotificationStatus(token: String) async throws(AppStoreClientError) -> TestNotificationStatus {
        let path = "/inApps/v1/notifications/test/" + (try Self.pathSegment(token, name: "test notification token"))
        let wire = try await call(ServerAPIWire.CheckTestNotificationResponse.self, method: "GET", path: path)
        guard let signed = wire.signedPayload else {
            throw AppStoreClientError(.malformedReply, reason: "the test notification status has no signedPayload", environment: environment)
        }
        return TestNotificationStatus(notification: try await verifyNotification(signed), sendAttempts: (wire.sendAttempts ?? []).map(SendAttempt.init))
    }

    /// Send Consumption Information: `PUT /inApps/v2/transactions/consumption/{transactionId}`,
    /// after a `CONSUMPTION_REQUEST` notification (Apple answers 202).
    ///
    /// - Throws: ``AppStoreClientError/Code/invalidRequest`` before calling Apple when the
    ///   information breaks Apple's rules (no consent; a percentage with an undelivered
    ///   purchase; a prorated refund without a percentage); anything a call throws.
    public func sendConsumptionInformation(transactionId: String, _ information: ConsumptionInformation) async throws(AppStoreClientError) {
        let path = "/inApps/v2/transactions/consumption/" + (try Self.pathSegment(transactionId, name: "transaction id"))
        let body = try information.wireBody()
        _ = try await send(method: "PUT", path: path, body: body, accepting: [200, 202])
    }

    // MARK: Plumbing

    /// Sends one authenticated request under the retry policy and decodes the answer.
    func call<Wire: Decodable>(
        _ type: Wire.Type,
        method: String,
        path: String,
        query: [(String, String)] = [],
        body: [UInt8]? = nil
    ) async throws(AppStoreClientError) -> Wire {
        let response = try await send(method: method, path: path, query: query, body: body)
        do {
            return try JSONDecoder().decode(Wire.self, from: Data(response.body))
        } catch let error as DecodingError {
            throw AppStoreClientError(.malformedReply, reason: "\(path): \(DecodingErrorSummary(error))", environment: environment)
        } catch {
            throw AppStoreClientError(.malformedReply, reason: "\(path): the answer is not JSON", environment: environment)
        }
    }

    /// Sends one authenticated request under the retry policy; any status in `success` is an answer.
    func send(
        method: String,
        path: String,
        query: [(String, String)] = [],
        body: [UInt8]? = nil,
        accepting success: Set<Int> = [200]
    ) async throws(AppStoreClientError) -> TransportResponse {
        try await Traces.span(Traces.appStoreServerAPICall, ofKind: .client) { span throws(AppStoreClientError) in
            span.attributes["http.request.method"] = method
            span.attributes["url.path"] = path
            span.attributes["storegate.appstore.environment"] = environment.rawValue
            let response = try await sendUntraced(method: method, path: path, query: query, body: body, accepting: success)
            span.attributes["http.response.status_code"] = response.status
            return response
        }
    }

    private func sendUntraced(
        method: String,
        path: String,
        query: [(String, String)],
        body: [UInt8]?,
        accepting success: Set<Int>
    ) async throws(AppStoreClientError) -> TransportResponse {
        let url = baseURL + path + Self.queryString(query)
        let retrier = Retrier(policy: retryPolicy, logger: logger, now: now)
        let environment = self.environment
        let response: TransportResponse
        do {
            response = try await retrier.run(until: retrier.callDeadline()) { (_: Int, deadline: ContinuousClock.Instant) throws(AppStoreClientError) -> TransportResponse in
                let token = try await self.tokens.token()
                var headers: [TransportRequest.Header] = [
                    .init("Authorization", "Bearer " + token.compact), .init("Accept", "application/json"), .init("User-Agent", StoreGateVersion.userAgent),
                ]
                if body != nil { headers.append(.init("Content-Type", "application/json")) }
                let response = try await self.transport.sendToApple(TransportRequest(method: method, url: url, headers: headers, body: body), deadline: deadline)
                if response.status == 401 {
                    await self.tokens.invalidate()
                }
                try HTTPStatusPolicy.requireSuccess(response, environment: environment, now: self.now(), accepting: success)
                return response
            }.value
        } catch {
            throw error.with(environment: environment)
        }
        return response
    }

    func checkBundle(_ bundleId: String?) throws(AppStoreClientError) {
        if let bundleId, bundleId != self.bundleId {
            throw AppStoreClientError(.bundleIdMismatch, reason: "the answer is for \(bundleId), not \(self.bundleId)", environment: environment)
        }
    }

    private func verifyTransactions(_ signed: [String]) async throws(AppStoreClientError) -> [VerifiedTransaction] {
        var transactions: [VerifiedTransaction] = []
        transactions.reserveCapacity(signed.count)
        for jws in signed {
            transactions.append(try await verifyTransaction(jws))
        }
        return transactions
    }

    private func verifyTransaction(_ jws: String) async throws(AppStoreClientError) -> VerifiedTransaction {
        let transaction: VerifiedTransaction
        do {
            transaction = try await verifier.verifyTransaction(jws)
        } catch {
            throw AppStoreClientError(.signedPayloadRejected, reason: "signedTransactionInfo: \(error)", environment: environment)
        }
        guard transaction.bundleId == bundleId else {
            throw AppStoreClientError(.bundleIdMismatch, reason: "a signed transaction is for \(transaction.bundleId), not \(bundleId)", environment: environment)
        }
        return transaction
    }

    private func verifyRenewal(_ jws: String) async throws(AppStoreClientError) -> VerifiedRenewalInfo {
        do {
            return try await verifier.verifyRenewalInfo(jws)
        } catch {
            throw AppStoreClientError(.signedPayloadRejected, reason: "signedRenewalInfo: \(error)", environment: environment)
        }
    }

    /// Verifies notifications concurrently, answering them in their order; any failure is thrown.
    private func verifyNotifications(_ payloads: [String]) async throws(AppStoreClientError) -> [VerifiedNotification] {
        if payloads.count == 1 { return [try await verifyNotification(payloads[0])] }
        var byIndex: [Int: VerifiedNotification] = [:]
        do {
            try await withThrowingTaskGroup(of: (Int, VerifiedNotification).self) { group in
                for (index, payload) in payloads.enumerated() {
                    group.addTask { (index, try await self.verifyNotification(payload)) }
                }
                for try await (index, notification) in group {
                    byIndex[index] = notification
                }
            }
        } catch let error as AppStoreClientError {
            throw error
        } catch {
            throw AppStoreClientError(.cancelled, reason: "the verification of a history page was cancelled", environment: environment)
        }
        return try payloads.indices.map { (index: Int) throws(AppStoreClientError) -> VerifiedNotification in
            guard let notification = byIndex[index] else {
                throw AppStoreClientError(.malformedReply, reason: "a notification was not verified", environment: environment)
            }
            return notification
        }
    }

    private func verifyNotification(_ jws: String) async throws(AppStoreClientError) -> VerifiedNotification {
        let notification: VerifiedNotification
        do {
            notification = try await verifier.verifyNotification(jws)
        } catch {
            throw AppStoreClientError(.signedPayloadRejected, reason: "signedPayload: \(error)", environment: environment)
        }
        guard notification.bundleId == bundleId else {
            throw AppStoreClientError(.bundleIdMismatch, reason: "a notification is for \(notification.bundleId), not \(bundleId)", environment: environment)
        }
        // The history and test notifications of one environment are that environment's (a
        // proof an opt-in anchor signed reports Test or Xcode; see SignedDataPayloadVerifier).
        guard notification.environment == environment || !AppStoreEnvironment.defaultAccepted.contains(notification.environment) else {
            throw AppStoreClientError(
                .environmentMismatch, reason: "a notification is from \(notification.environment), not \(environment)", environment: environment
            )
        }
        return notification
    }

    /// Characters left as they are in a path segment or query value.
    private static let unreserved: Set<UInt8> = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8))

    static func percentEncode(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            if unreserved.contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(format: "%02X", byte)
            }
        }
        return out
    }

    /// An identifier as one path segment: non-empty, at most 256 bytes, percent-encoded.
    static func pathSegment(_ value: String, name: String) throws(AppStoreClientError) -> String {
        guard !value.isEmpty, value.utf8.count <= 256 else {
            throw AppStoreClientError(.invalidRequest, reason: "the \(name) must be 1 to 256 bytes")
        }
        return percentEncode(value)
    }

    static func queryString(_ items: [(String, String)]) -> String {
        guard !items.isEmpty else { return "" }
        return "?" + items.map { percentEncode($0.0) + "=" + percentEncode($0.1) }.joined(separator: "&")
    }
}
