import StoreGateAppStoreClient
import StoreGateCore
import StoreGateHTTP
import Synchronization
import Testing

/// The transport's failures (``HTTPTransportError``) as the App Store clients report them:
/// under the `AppStoreClientError` codes of the same names, retried exactly when the transport
/// calls them retryable.
@Suite("transport failures in the App Store clients")
struct TransportErrorTests {
    static let pairs: [(HTTPTransportError.Code, AppStoreClientError.Code)] = [
        (.invalidRequest, .invalidRequest), (.connectionFailed, .connectionFailed), (.tlsFailure, .tlsFailure),
        (.timedOut, .timedOut), (.responseTooLarge, .responseTooLarge), (.cancelled, .cancelled),
    ]

    @Test("each transport code becomes the client code of the same name, its reason and retry decision kept")
    func mapping() {
        for (transport, client) in Self.pairs {
            let failure = HTTPTransportError(transport, reason: "why")
            let mapped = AppStoreClientError(failure, environment: .sandbox)
            #expect(mapped.code == client)
            #expect(mapped.code.description == transport.description)
            #expect(mapped.reason == "why")
            #expect(mapped.environment == .sandbox)
            #expect(mapped.file == failure.file && mapped.line == failure.line)
            #expect(mapped.isRetryable == failure.isRetryable, "\(transport)")
        }
        #expect(HTTPTransportError(.connectionFailed, reason: "a") == HTTPTransportError(.connectionFailed, reason: "b"))
        #expect(HTTPTransportError(.connectionFailed, reason: "a") != HTTPTransportError(.timedOut, reason: "a"))
        #expect(HTTPTransportError(.tlsFailure, reason: "bad chain").description == "http: tls_failure: bad chain")
    }

    @Test("verifyReceipt: a connection failure is retried to the attempt bound; a TLS failure is reported at once", arguments: [
        (HTTPTransportError.Code.connectionFailed, AppStoreClientError.Code.connectionFailed, 3),
        (.tlsFailure, .tlsFailure, 1),
        (.invalidRequest, .invalidRequest, 1),
    ])
    func verifyReceipt(_ thrown: HTTPTransportError.Code, _ reported: AppStoreClientError.Code, _ attempts: Int) async {
        let transport = FailingTransport(thrown)
        let client = VerifyReceiptClient(
            transport: transport, endpoints: VerifyReceiptEndpoints(production: "https://p.invalid/verifyReceipt", sandbox: "https://s.invalid/verifyReceipt"),
            retryPolicy: quickRetries, logger: quietLogger
        )
        let error = await appStoreError { try await client.send(VerifyReceiptRequest(receiptData: "QQ==")) }
        #expect(error?.code == reported)
        #expect(error?.attempts == attempts)
        #expect(transport.calls == attempts)
    }
}

/// A transport whose every attempt fails with one code, counting the attempts.
final class FailingTransport: HTTPTransport {
    private let code: HTTPTransportError.Code
    private let count = Mutex(0)

    init(_ code: HTTPTransportError.Code) {
        self.code = code
    }

    var calls: Int { count.withLock { $0 } }

    func send(_ request: TransportRequest, deadline: ContinuousClock.Instant) async throws(HTTPTransportError) -> TransportResponse {
        count.withLock { $0 += 1 }
        throw HTTPTransportError(code, reason: "the test transport fails")
    }
}
