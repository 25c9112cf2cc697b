import Foundation
public import Logging
public import StoreGateCore
public import StoreGateHTTP
import Tracing

/// Calls Apple's legacy verifyReceipt endpoint.
///
/// Production first; on status 21007 (a sandbox receipt) the sandbox; when the sandbox was
/// asked first and answers 21008 (a production receipt), production. Each endpoint is asked
/// at most once per call, so a stand-in answering 21007 and 21008 forever cannot loop the
/// client. Transient failures (connection, timeout, HTTP 5xx, 429, statuses 21005, 21009,
/// 21100–21199) are retried under the ``RetryPolicy``, within one deadline for the whole call.
///
/// ``send(_:startingWith:)`` returns Apple's reply as data; ``verify(_:expecting:startingWith:)``
/// also checks it against the purchase (``VerifyReceiptReplyVerifier``), which is what a
/// backend should call.
public struct VerifyReceiptClient: Sendable {
    /// One exchange with verifyReceipt: the final reply and how it was reached.
    public struct Exchange: Sendable, Hashable {
        /// The last reply.
        public var reply: VerifyReceiptResponse
        /// The environment whose endpoint gave ``reply``.
        public var answeredBy: AppStoreEnvironment
        /// The endpoints asked, in order, with the status each gave.
        public var route: [Hop]
        /// Attempts made in total, retries included.
        public var attempts: Int

        /// One endpoint asked.
        public struct Hop: Sendable, Hashable {
            /// The environment Apple names.
            public var environment: AppStoreEnvironment
            /// The status Apple reports.
            public var status: VerifyReceiptStatus
        }

        /// Creates a value from its parts.
        public init(reply: VerifyReceiptResponse, answeredBy: AppStoreEnvironment, route: [Hop], attempts: Int) {
            self.reply = reply
            self.answeredBy = answeredBy
            self.route = route
            self.attempts = attempts
        }
    }

    /// The HTTP transport.
    public let transport: any HTTPTransport
    /// The endpoints asked.
    public let endpoints: VerifyReceiptEndpoints
    /// Attempts, backoff and deadline of each call.
    public let retryPolicy: RetryPolicy
    private let logger: Logger

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - transport: The HTTP transport (``AsyncHTTPClientTransport`` in production).
    ///   - endpoints: Apple's endpoints, or a stand-in's.
    ///   - retryPolicy: Attempts, backoff and the deadline of each call.
    ///   - logger: Receives debug-level events; never receipts or secrets.
    public init(
        transport: any HTTPTransport,
        endpoints: VerifyReceiptEndpoints = .apple,
        retryPolicy: RetryPolicy = .default,
        logger: Logger
    ) {
        self.transport = transport
        self.endpoints = endpoints
        self.retryPolicy = retryPolicy
        self.logger = logger
    }

    /// Sends a receipt to verifyReceipt and returns Apple's final reply, unchecked.
    ///
    /// - Parameters:
    ///   - request: The receipt, shared secret and options.
    ///   - first: The environment to ask first: ``AppStoreEnvironment/production`` (Apple's advice) or
    ///     ``AppStoreEnvironment/sandbox``.
    /// - Throws: ``AppStoreClientError``: transport failures, HTTP errors, a malformed reply,
    ///   a retryable status that stayed after every retry, or a routing loop.
    public func send(_ request: VerifyReceiptRequest, startingWith first: AppStoreEnvironment = .production) async throws(AppStoreClientError) -> Exchange {
        guard !request.receiptData.isEmpty else {
            throw AppStoreClientError(.invalidRequest, reason: "the receipt data is empty")
        }
        guard endpoints.url(for: first) != nil else {
            throw AppStoreClientError(.invalidRequest, reason: "verifyReceipt exists only for production and sandbox, not \(first)")
        }
        let retrier = Retrier(policy: retryPolicy, logger: logger, now: { Date() })
        let deadline = retrier.callDeadline()
        let body = request.body()
        var environment = first
        var route: [Exchange.Hop] = []
        var attempts = 0
        while true {
            guard let url = endpoints.url(for: environment) else {
                throw AppStoreClientError(.invalidConfiguration, reason: "no verifyReceipt endpoint for \(environment)")
            }
            let asked = environment
            let reply: VerifyReceiptResponse
            do {
                let result = try await retrier.run(until: deadline) { (_: Int, attemptDeadline: ContinuousClock.Instant) throws(AppStoreClientError) -> VerifyReceiptResponse in
                    try await self.attempt(url: url, body: body, environment: asked, deadline: attemptDeadline)
                }
                reply = result.value
                attempts += result.attempts
            } catch {
                throw error.with(attempts: attempts + error.attempts).with(environment: asked)
            }
            route.append(.init(environment: asked, status: reply.status))
            logger.debug("verifyReceipt answered", metadata: ["environment": "\(asked)", "status": "\(reply.status)"])

            let next: AppStoreEnvironment?
            switch (reply.status, asked) {
            case (.sandboxReceiptSentToProduction, .production): next = .sandbox
            case (.productionReceiptSentToSandbox, .sandbox): next = .production
            default: next = nil
            }
            guard let next else {
                return Exchange(reply: reply, answeredBy: asked, route: route, attempts: attempts)
            }
            guard !route.contains(where: { $0.environment == next }) else {
                throw AppStoreClientError(
                    .routingLoop,
                    reason: "\(asked) sent the receipt back to \(next), which was already asked",
                    status: reply.status,
                    environment: asked,
                    attempts: attempts
                )
            }
            environment = next
        }
    }

    /// Sends a receipt and accepts the reply only if it describes the expected purchase.
    ///
    /// - Throws: ``AppStoreClientError``: everything ``send(_:startingWith:)`` throws, and every
    ///   failure of ``VerifyReceiptReplyVerifier/check(_:expecting:)``.
    public func verify(
        _ request: VerifyReceiptRequest,
        expecting expectation: VerifyReceiptExpectation,
        startingWith first: AppStoreEnvironment = .production
    ) async throws(AppStoreClientError) -> AcceptedVerifyReceiptReply {
        let exchange = try await send(request, startingWith: first)
        return try VerifyReceiptReplyVerifier.check(exchange, expecting: expectation)
    }

    /// One POST to one endpoint.
    private func attempt(url: String, body: [UInt8], environment: AppStoreEnvironment, deadline: ContinuousClock.Instant) async throws(AppStoreClientError) -> VerifyReceiptResponse {
        try await Traces.span(Traces.verifyReceiptCall, ofKind: .client) { span throws(AppStoreClientError) in
            span.attributes["storegate.appstore.environment"] = environment.rawValue
            let reply = try await attemptUntraced(url: url, body: body, environment: environment, deadline: deadline)
            span.attributes["storegate.verify_receipt.status"] = reply.status.rawValue
            return reply
        }
    }

    private func attemptUntraced(url: String, body: [UInt8], environment: AppStoreEnvironment, deadline: ContinuousClock.Instant) async throws(AppStoreClientError) -> VerifyReceiptResponse {
        let request = TransportRequest(
            method: "POST",
            url: url,
            headers: [.init("Content-Type", "application/json"), .init("Accept", "application/json"), .init("User-Agent", StoreGateVersion.userAgent)],
            body: body
        )
        let response = try await transport.sendToApple(request, deadline: deadline)
        try HTTPStatusPolicy.requireSuccess(response, environment: environment)
        let reply = try VerifyReceiptResponse.decode(response.body)
        if reply.status.isRetryable {
            throw AppStoreClientError(
                .replyStatus,
                reason: "verifyReceipt answered a temporary failure: \(reply.status.meaning)",
                status: reply.status,
                httpStatus: response.status,
                environment: environment
            )
        }
        return reply
    }
}
