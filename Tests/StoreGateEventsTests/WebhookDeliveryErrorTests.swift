import Foundation
import StoreGateEvents
import StoreGateHTTP
import StoreGateLedger
import Synchronization
import Testing

/// A receiver that gives no answer is the deliverer's failure (``WebhookDeliveryError``), not
/// an App Store client's: the delivery records `code: reason` with the transport's code and
/// is retried; the test event carries the typed failure and the endpoint's name.
@Suite("Webhook delivery errors")
struct WebhookDeliveryErrorTests {
    @Test("a transport failure becomes the webhook's error of the same code, for the endpoint it was sent to", arguments: [
        HTTPTransportError.Code.connectionFailed, .tlsFailure, .timedOut, .responseTooLarge, .cancelled, .invalidRequest,
    ])
    func mapping(_ code: HTTPTransportError.Code) {
        let transport = HTTPTransportError(code, reason: "why")
        let error = WebhookDeliveryError(transport, endpoint: "crm")
        #expect(error.code == code)
        #expect(error.endpoint == "crm")
        #expect(error.description == "\(code): why")
        #expect(error.file == transport.file && error.line == transport.line)
        #expect(error == WebhookDeliveryError(code, reason: "other", endpoint: "other"))
    }

    @Test("no answer: the delivery stays pending with the transport's code, the test event reports the typed failure")
    func noAnswer() async throws {
        let ledger = InMemoryLedger()
        let transport = RefusingTransport()
        let endpoint = try WebhookEndpoint(name: "down", url: "http://127.0.0.1:9/hook", secret: WebhookDeliveryTests.secret)
        let service = WebhookDeliveryService(
            store: ledger, endpoints: [endpoint], transport: transport, policy: WebhookDeliveryTests.fastPolicy,
            addressPolicy: .allowingEveryAddress, logger: WebhookDeliveryTests.logger
        )
        #expect(try await service.deliverOnce(endpoint) == 0)
        try await WebhookDeliveryTests.record(ledger, accounts: 1, perAccount: 1, prefix: "down")
        #expect(try await service.deliverOnce(endpoint) > 0)
        let deliveries = try await ledger.deliveries(endpoint: "down", status: nil, after: 0, limit: 10)
        #expect(!deliveries.isEmpty)
        #expect(deliveries.allSatisfy { $0.status == .pending && $0.lastError == "connection_failed: nobody listens" }, "\(deliveries)")
        #expect(deliveries.allSatisfy { $0.attempts == 1 })

        let test = await service.sendTest(to: endpoint)
        #expect(!test.isDelivered)
        #expect(test.status == nil)
        #expect(test.refusal == nil)
        #expect(test.failure?.code == .connectionFailed)
        #expect(test.failure?.endpoint == "down")
        #expect(test.error == "connection_failed: nobody listens")
        #expect(transport.requests.count >= 2)
        #expect(transport.requests.allSatisfy { $0.method == "POST" && $0.url == endpoint.url })
    }

    @Test("an answer is never a delivery error: a 500 is retried as an HTTP status, the test event has no failure")
    func answered() async throws {
        let ledger = InMemoryLedger()
        let endpoint = try WebhookEndpoint(name: "broken", url: "http://127.0.0.1:9/hook", secret: WebhookDeliveryTests.secret)
        let service = WebhookDeliveryService(
            store: ledger, endpoints: [endpoint], transport: AnsweringTransport(status: 500), policy: WebhookDeliveryTests.fastPolicy,
            addressPolicy: .allowingEveryAddress, logger: WebhookDeliveryTests.logger
        )
        #expect(try await service.deliverOnce(endpoint) == 0)
        try await WebhookDeliveryTests.record(ledger, accounts: 1, perAccount: 1, prefix: "broken")
        #expect(try await service.deliverOnce(endpoint) > 0)
        let deliveries = try await ledger.deliveries(endpoint: "broken", status: nil, after: 0, limit: 10)
        #expect(!deliveries.isEmpty)
        #expect(deliveries.allSatisfy { $0.status == .pending && $0.lastError == "HTTP 500" }, "\(deliveries)")
        let test = await service.sendTest(to: endpoint)
        #expect(test.status == 500)
        #expect(test.error == "HTTP 500")
        #expect(test.failure == nil)
    }
}

/// A transport that reaches nobody, keeping what it was asked to send.
private final class RefusingTransport: HTTPTransport {
    private let sent = Mutex<[TransportRequest]>([])

    var requests: [TransportRequest] { sent.withLock { $0 } }

    func send(_ request: TransportRequest, deadline: ContinuousClock.Instant) async throws(HTTPTransportError) -> TransportResponse {
        sent.withLock { $0.append(request) }
        throw HTTPTransportError(.connectionFailed, reason: "nobody listens")
    }
}

/// A transport whose every answer has one status and no body.
private struct AnsweringTransport: HTTPTransport {
    let status: Int

    func send(_ request: TransportRequest, deadline: ContinuousClock.Instant) async throws(HTTPTransportError) -> TransportResponse {
        TransportResponse(status: status)
    }
}
