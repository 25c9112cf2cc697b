import Foundation
import Logging
import StoreGateCore
@testable import StoreGateEvents
import StoreGateHTTP
@testable import StoreGateLedger
import StoreGateTestSupport
import Testing

/// Server-side request forgery: webhook URLs reaching into the service's host or network are
/// refused, when an endpoint is created and again before delivering.
@Suite("Webhook address policy")
struct WebhookAddressPolicyTests {
    static func bytes(_ text: String) -> [UInt8] {
        if text.contains(":") {
            var address = in6_addr()
            precondition(inet_pton(AF_INET6, text, &address) == 1, text)
            return withUnsafeBytes(of: &address) { Array($0) }
        }
        var address = in_addr()
        precondition(inet_pton(AF_INET, text, &address) == 1, text)
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    @Test("every address class is told apart, IPv4 and IPv6 (embedded IPv4 classified as what it carries)", arguments: [
        ("127.0.0.1", WebhookAddressClass.loopback), ("127.255.0.9", .loopback), ("::1", .loopback),
        ("10.1.2.3", .private), ("172.16.0.1", .private), ("172.31.255.255", .private), ("192.168.1.1", .private),
        ("fc00::1", .private), ("fd12:3456::1", .private), ("fec0::1", .private),
        ("169.254.169.254", .linkLocal), ("fe80::1", .linkLocal), ("febf::1", .linkLocal),
        ("0.0.0.0", .unspecified), ("0.1.2.3", .unspecified), ("::", .unspecified),
        ("100.64.0.1", .sharedAddressSpace), ("100.127.255.254", .sharedAddressSpace),
        ("224.0.0.1", .multicast), ("239.255.255.250", .multicast), ("ff02::1", .multicast),
        ("255.255.255.255", .reserved), ("240.0.0.1", .reserved), ("198.18.0.1", .reserved),
        ("::ffff:127.0.0.1", .loopback), ("::ffff:10.0.0.1", .private), ("::ffff:169.254.169.254", .linkLocal),
        ("64:ff9b::a00:1", .private), ("2002:7f00:1::", .loopback), ("::127.0.0.1", .loopback),
        ("93.184.216.34", .global), ("172.32.0.1", .global), ("100.128.0.1", .global), ("169.253.1.1", .global),
        ("2606:4700::1111", .global), ("::ffff:93.184.216.34", .global), ("2002:5db8:d822::", .global),
    ])
    func classes(address: String, expected: WebhookAddressClass) {
        #expect(WebhookAddressClass.of(Self.bytes(address)) == expected, "\(address)")
    }

    @Test("lengths other than 4 or 16 is refused as reserved (fail closed)")
    func oddLength() {
        #expect(WebhookAddressClass.of([1, 2, 3]) == .reserved)
        #expect(WebhookAddressClass.of([]) == .reserved)
    }

    @Test("URLs to non-public hosts are refused by code, literal or resolved by the system; public ones pass", arguments: [
        ("http://127.0.0.1:8080/hook", WebhookAddressError.Code.forbiddenAddress),
        ("http://[::1]/hook", .forbiddenAddress),
        ("http://localhost/hook", .forbiddenAddress),
        ("http://2130706433/hook", .forbiddenAddress),  // 127.0.0.1 as one decimal number
        ("http://0x7f.1/hook", .forbiddenAddress),
        ("http://10.0.0.5/hook", .forbiddenAddress),
        ("http://[fd00::5]/hook", .forbiddenAddress),
        ("http://169.254.169.254/latest/meta-data", .forbiddenAddress),
        ("http://[fe80::1]/hook", .forbiddenAddress),
        ("http://0.0.0.0/hook", .forbiddenAddress),
        ("http://[::]/hook", .forbiddenAddress),
        ("http://100.64.1.1/hook", .forbiddenAddress),
        ("http://224.0.0.1/hook", .forbiddenAddress),
        ("http://[ff02::1]/hook", .forbiddenAddress),
        ("http://[::ffff:127.0.0.1]/hook", .forbiddenAddress),
        ("ftp://example.com/hook", .invalidURL),
        ("http://user:pass@example.com/hook", .invalidURL),
        ("not a url", .invalidURL),
    ])
    func refusals(url: String, code: WebhookAddressError.Code) async {
        let policy = WebhookAddressPolicy()
        await #expect(throws: WebhookAddressError(code, "")) { try await policy.check(url) }
    }

    @Test("a host name resolving to loopback is refused; public answers pass; private addresses pass only when allowed")
    func resolvedNames() async throws {
        let answers: [String: [[UInt8]]] = [
            "rebind.example.com": [Self.bytes("93.184.216.34"), Self.bytes("127.0.0.1")],
            "public.example.com": [Self.bytes("93.184.216.34"), Self.bytes("2606:4700::1111")],
            "metadata.example.com": [Self.bytes("::ffff:169.254.169.254")],
        ]
        let policy = WebhookAddressPolicy(resolver: { host in answers[host] })
        await #expect(throws: WebhookAddressError(.forbiddenAddress, "")) { try await policy.check("https://rebind.example.com/hook") }
        do throws(WebhookAddressError) {
            try await policy.check("https://metadata.example.com/hook")
            Issue.record("a link-local answer passed")
        } catch {
            #expect(error.addressClass == .linkLocal)
        }
        try await policy.check("https://public.example.com/hook")
        await #expect(throws: WebhookAddressError(.unresolvable, "")) { try await policy.check("https://unknown.example.com/hook") }
        try await WebhookAddressPolicy.allowingEveryAddress.check("http://127.0.0.1:9/hook")
        await #expect(throws: WebhookAddressError(.invalidURL, "")) { try await WebhookAddressPolicy.allowingEveryAddress.check("gopher://x/") }
    }

    @Test("at delivery time the address is checked again: a refused receiver gets nothing, the delivery records the code and retries")
    func refusedAtDelivery() async throws {
        let ledger = InMemoryLedger()
        let transport = AsyncHTTPClientTransport(logger: WebhookDeliveryTests.logger)
        try await WebhookReceiver.run(secret: WebhookDeliveryTests.secret) { receiver in
            let endpoint = try WebhookEndpoint(name: "local", url: receiver.url, secret: WebhookDeliveryTests.secret)
            let service = WebhookDeliveryService(
                store: ledger, endpoints: [endpoint], transport: transport, policy: WebhookDeliveryTests.fastPolicy, logger: WebhookDeliveryTests.logger
            )
            #expect(try await service.deliverOnce(endpoint) == 0)
            try await WebhookDeliveryTests.record(ledger, accounts: 1, perAccount: 1, prefix: "ssrf")
            #expect(try await service.deliverOnce(endpoint) > 0)
            #expect(try await service.deliverOnce(endpoint) >= 0)
            let deliveries = try await ledger.deliveries(endpoint: "local", status: nil, after: 0, limit: 10)
            #expect(!deliveries.isEmpty)
            #expect(deliveries.allSatisfy { $0.status == .pending && ($0.lastError ?? "").hasPrefix("webhook_address_forbidden") }, "\(deliveries)")
            #expect(deliveries.allSatisfy { $0.attempts >= 1 })
            #expect(receiver.received.isEmpty, "nothing reached the loopback receiver")

            // The test event obeys the same policy.
            let test = await service.sendTest(to: endpoint)
            #expect(test.refusal == .forbiddenAddress)
            #expect(!test.isDelivered)
            #expect(receiver.received.isEmpty)

            // Allowed explicitly, it goes, signed. One attempt, with a deadline a machine running
            // every suite at once meets (the fast policy's 300 ms is not: it timed out there).
            var patient = WebhookDeliveryTests.fastPolicy
            patient.attemptTimeout = .seconds(20)
            let allowed = WebhookDeliveryService(
                store: ledger, endpoints: [endpoint], transport: transport, policy: patient, addressPolicy: .allowingEveryAddress,
                logger: WebhookDeliveryTests.logger
            )
            let sent = await allowed.sendTest(to: endpoint)
            #expect(sent.isDelivered)
            #expect(sent.status == 200)
            #expect(receiver.received.map(\.type) == ["webhook.test"])
            #expect(receiver.received.allSatisfy { $0.signatureValid && $0.standardSignatureValid && $0.id == sent.eventId })
        }
        try await transport.shutdown()
    }

    @Test("paused: events still fan out as pending deliveries, nothing is claimed or sent until resumed")
    func paused() async throws {
        let ledger = InMemoryLedger()
        let transport = AsyncHTTPClientTransport(logger: WebhookDeliveryTests.logger)
        try await WebhookReceiver.run(secret: WebhookDeliveryTests.secret) { receiver in
            var endpoint = try WebhookEndpoint(name: "paused", url: receiver.url, secret: WebhookDeliveryTests.secret)
            endpoint.isPaused = true
            let service = WebhookDeliveryService(
                store: ledger, endpoints: [endpoint], transport: transport, policy: WebhookDeliveryTests.fastPolicy, addressPolicy: .allowingEveryAddress,
                logger: WebhookDeliveryTests.logger
            )
            #expect(try await service.deliverOnce(endpoint) == 0)
            try await WebhookDeliveryTests.record(ledger, accounts: 1, perAccount: 1, prefix: "pause")
            #expect(try await service.deliverOnce(endpoint) == 1)
            #expect(try await ledger.deliveries(endpoint: "paused", status: .pending, after: 0, limit: 10).count == 1)
            #expect(receiver.received.isEmpty)
            endpoint.isPaused = false
            // Resumed, it goes (retried while a loaded machine answers slower than the attempt timeout).
            let deadline = ContinuousClock.now + .seconds(20)
            var delivered = 0
            while delivered == 0, ContinuousClock.now < deadline {
                try await service.deliverOnce(endpoint)
                delivered = try await ledger.deliveries(endpoint: "paused", status: .delivered, after: 0, limit: 10).count
                if delivered == 0 { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(delivered == 1)
            #expect(receiver.received.contains { $0.status == 200 })
        }
        try await transport.shutdown()
    }
}
