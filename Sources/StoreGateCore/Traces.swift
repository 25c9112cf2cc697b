public import Tracing

/// The spans StoreGate records (swift-distributed-tracing), by name, and the one way to
/// record one around code that throws a typed error.
///
/// Without a bootstrapped tracer (`InstrumentationSystem` left alone, as `storegate serve`
/// does when `OTEL_EXPORTER_OTLP_ENDPOINT` is not set) every span is a `NoOpSpan`: no
/// allocation of a real span, no clock read, nothing exported.
///
/// ```swift
/// let outcome = try await Traces.span(Traces.ledgerRecord) { span throws(LedgerError) in
///     try await ledger.record(proof, for: account)
/// }
/// ```
///
/// Span names are low-cardinality (no ids in them); what varies goes in attributes.
public enum Traces {
    /// An app receipt's offline verification (PKCS#7 signature, chain, payload, expectations).
    public static let receiptVerification = "storegate.verify.receipt"
    /// A StoreKit 2 signed transaction's verification (JWS signature, chain, expectations).
    public static let transactionVerification = "storegate.verify.transaction"
    /// An App Store Server Notification's verification (the notification's JWS and the ones nested in it).
    public static let notificationVerification = "storegate.verify.notification"
    /// A verified proof recorded in the ledger.
    public static let ledgerRecord = "storegate.ledger.record"
    /// One call to the App Store Server API, retries included.
    public static let appStoreServerAPICall = "storegate.appstore.server_api"
    /// One POST to Apple's legacy verifyReceipt endpoint.
    public static let verifyReceiptCall = "storegate.appstore.verify_receipt"
    /// One attempt to deliver an event to a webhook endpoint.
    public static let webhookDelivery = "storegate.webhook.deliver"

    /// Runs `body` in a span named `name`, a child of the task's current span (if any), and
    /// ends the span when `body` returns or throws.
    ///
    /// A thrown error is recorded on the span and sets its status to error; it is rethrown
    /// with its type kept (swift-distributed-tracing's `withSpan` only rethrows `any Error`).
    ///
    /// - Parameters:
    ///   - name: The span's name, one of the constants of ``Traces``.
    ///   - kind: `.client` for a call to another service, `.internal` otherwise.
    ///   - isolation: The caller's actor, so that `body` need not be `Sendable`.
    ///   - body: The work, given the span to add attributes to.
    /// - Throws: What `body` throws.
    public static func span<T, Failure: Error>(
        _ name: String,
        ofKind kind: SpanKind = .internal,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (any Span) async throws(Failure) -> T
    ) async throws(Failure) -> T {
        let result: Result<T, Failure> = await withSpan(name, ofKind: kind, isolation: isolation) { span in
            do throws(Failure) {
                return .success(try await body(span))
            } catch {
                span.recordError(error)
                span.setStatus(SpanStatus(code: .error))
                return .failure(error)
            }
        }
        return try result.get()
    }
}
