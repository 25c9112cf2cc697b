import Foundation
import StoreGateEvents
import Testing

@Suite("Standard Webhooks signatures and endpoint secrets")
struct StandardWebhookSignatureTests {
    /// A `whsec_` secret (24 bytes) and a plain one, the two forms an endpoint may have.
    static let standard = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let plain = "plain-secret-0123456789"
    static let id = "6c4c5f0e-8a55-4c1e-9d1b-2f1f3e0a9b7d"
    static let body = Array(#"{"id":"6c4c5f0e-8a55-4c1e-9d1b-2f1f3e0a9b7d","type":"purchase.recorded"}"#.utf8)
    static let sent = Date(timeIntervalSince1970: 1_732_450_000)

    static func secret(_ text: String) throws -> WebhookSecret { try WebhookSecret(text) }

    @Test("the specification's libraries' own vector: v1 of \"id.timestamp.payload\" keyed by the decoded whsec_ secret")
    func specificationVector() throws {
        // The known answer of the Standard Webhooks reference library's test `test_sign_function`
        // (libraries/python/tests/test_webhooks.py in github.com/standard-webhooks/standard-webhooks),
        // recomputed with the `standardwebhooks` package from PyPI (1.1.0):
        //   Webhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").sign("msg_p5jXN8AQM9LWM0D4loKWxJek",
        //       datetime.fromtimestamp(1614265330, tz=timezone.utc), '{"test": 2432232314}')
        let secret = try Self.secret(Self.standard)
        let payload = Array(#"{"test": 2432232314}"#.utf8)
        let signature = StandardWebhookSignature.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: payload, keys: [secret.standardKey])
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        let signedAt = try StandardWebhookSignature.verify(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", signature: signature, body: payload, secret: secret,
            now: Date(timeIntervalSince1970: 1_614_265_330 + 299)
        )
        #expect(signedAt == Date(timeIntervalSince1970: 1_614_265_330))
    }

    @Test("a delivery's headers, for a whsec_ secret and for a plain one, are what the PyPI libraries compute")
    func deliveryVectors() throws {
        // Computed with `standardwebhooks` 1.1.0: Webhook(<receiver form>).sign(id, 1732450000, body),
        // and with `stripe` 16.1.0: stripe.WebhookSignature._compute_signature("1732450000." + body, <secret>).
        let standard = try Self.secret(Self.standard)
        let plain = try Self.secret(Self.plain)
        let headers = StandardWebhookSignature.headers(id: Self.id, body: Self.body, secrets: [standard, plain], at: Self.sent.addingTimeInterval(0.7))
        #expect(headers.id == Self.id)
        #expect(headers.timestamp == 1_732_450_000)
        #expect(headers.signature == "v1,3wW4WbXn96ejNqobPFGanIyDnFJ/KUTOtw7g1ouJYKA= v1,Y4MP/3Nfy6YznivR8snnzHBWt5NOlvv9jIK/onqAkO8=")
        #expect(headers.fields.map { $0.name } == ["webhook-id", "webhook-timestamp", "webhook-signature"])
        // A plain secret reaches Standard Webhooks receivers as whsec_ + base64 of its bytes.
        #expect(standard.standardWebhooksSecret == Self.standard)
        #expect(plain.standardWebhooksSecret == "whsec_cGxhaW4tc2VjcmV0LTAxMjM0NTY3ODk=")
        #expect(try WebhookSecret(plain.standardWebhooksSecret).standardKey == plain.standardKey)

        // StoreGate-Signature: one v1 per secret, keyed by the text as configured (as Stripe's SDK keys it).
        #expect(
            WebhookSignature.header(body: Self.body, secrets: [standard, plain], at: Self.sent)
                == "t=1732450000,v1=016d67bbbf99d9bddef4860d245bd6b3c21bb7d18d9fc643a37007bcb8d194ca,v1=b4eada25681d40a25087764db297ffa7986d0fd28aa87524fdd038ebfe0b383e"
        )
        #expect(WebhookSignature.header(body: Self.body, secrets: [plain], at: Self.sent) == WebhookSignature.header(body: Self.body, secret: Self.plain, at: Self.sent))
    }

    @Test("signed with one secret or two, each verifies alone, in both schemes; a third secret does not", arguments: [1, 2])
    func rotation(_ count: Int) throws {
        let secrets = try [Self.standard, Self.plain].prefix(count).map(Self.secret)
        let headers = StandardWebhookSignature.headers(id: Self.id, body: Self.body, secrets: secrets, at: Self.sent)
        let storeGate = WebhookSignature.header(body: Self.body, secrets: secrets, at: Self.sent)
        #expect(headers.signature.split(separator: " ").count == count)
        #expect(storeGate.split(separator: ",").count == count + 1)
        for secret in secrets {
            // A receiver holding only this secret: its Standard Webhooks form, and the text as configured.
            let receiver = try WebhookSecret(secret.standardWebhooksSecret)
            #expect(try StandardWebhookSignature.verify(
                id: Self.id, timestamp: String(headers.timestamp), signature: headers.signature, body: Self.body, secret: receiver, now: Self.sent
            ) == Self.sent)
            #expect(try WebhookSignature.verify(header: storeGate, body: Self.body, secret: secret.text, now: Self.sent) == Self.sent)
        }
        let stranger = try Self.secret("whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY")
        #expect(throws: StandardWebhookSignature.Failure.mismatch) {
            try StandardWebhookSignature.verify(
                id: Self.id, timestamp: String(headers.timestamp), signature: headers.signature, body: Self.body, secret: stranger, now: Self.sent
            )
        }
        #expect(throws: WebhookSignature.Failure.mismatch) {
            try WebhookSignature.verify(header: storeGate, body: Self.body, secret: stranger.text, now: Self.sent)
        }
    }

    @Test("a changed body, id or timestamp, or an old or future timestamp, is refused")
    func refusals() throws {
        let secret = try Self.secret(Self.standard)
        let headers = StandardWebhookSignature.headers(id: Self.id, body: Self.body, secrets: [secret], at: Self.sent)
        func verify(id: String = Self.id, timestamp: String = "1732450000", body: [UInt8] = Self.body, now: Date = Self.sent) throws {
            try StandardWebhookSignature.verify(id: id, timestamp: timestamp, signature: headers.signature, body: body, secret: secret, now: now)
        }
        #expect(throws: StandardWebhookSignature.Failure.mismatch) { try verify(body: Array(#"{"id":"x"}"#.utf8)) }
        #expect(throws: StandardWebhookSignature.Failure.mismatch) { try verify(id: "6c4c5f0e-8a55-4c1e-9d1b-2f1f3e0a9b7e") }
        #expect(throws: StandardWebhookSignature.Failure.mismatch) { try verify(timestamp: "1732450001", now: Self.sent) }
        #expect(throws: StandardWebhookSignature.Failure.outsideTolerance(seconds: 301)) { try verify(now: Self.sent.addingTimeInterval(301)) }
        #expect(throws: StandardWebhookSignature.Failure.outsideTolerance(seconds: 400)) { try verify(now: Self.sent.addingTimeInterval(-400)) }
        // whsec_ put before a plain secret is not its receiver form (that is whsec_ + base64 of it).
        let plain = try Self.secret(Self.plain)
        let plainHeaders = StandardWebhookSignature.headers(id: Self.id, body: Self.body, secrets: [plain], at: Self.sent)
        #expect(throws: StandardWebhookSignature.Failure.mismatch) {
            try StandardWebhookSignature.verify(
                id: Self.id, timestamp: "1732450000", signature: plainHeaders.signature, body: Self.body,
                secret: try Self.secret("whsec_" + Self.plain), now: Self.sent
            )
        }
    }

    @Test("malformed headers are refused; other signature versions are ignored", arguments: [
        ("", "1732450000", "v1,3wW4WbXn96ejNqobPFGanIyDnFJ/KUTOtw7g1ouJYKA="),
        ("a.b", "1732450000", "v1,3wW4WbXn96ejNqobPFGanIyDnFJ/KUTOtw7g1ouJYKA="),
        (StandardWebhookSignatureTests.id, "", "v1,3wW4WbXn96ejNqobPFGanIyDnFJ/KUTOtw7g1ouJYKA="),
        (StandardWebhookSignatureTests.id, "-5", "v1,3wW4WbXn96ejNqobPFGanIyDnFJ/KUTOtw7g1ouJYKA="),
        (StandardWebhookSignatureTests.id, "1732450000.5", "v1,3wW4WbXn96ejNqobPFGanIyDnFJ/KUTOtw7g1ouJYKA="),
        (StandardWebhookSignatureTests.id, "1732450000", ""),
        (StandardWebhookSignatureTests.id, "1732450000", "v1"),
        (StandardWebhookSignatureTests.id, "1732450000", "v1,!!!"),
        (StandardWebhookSignatureTests.id, "1732450000", "v1,3wW4WbXn96ejNqobPFGanIyDnFJ/KUTOtw7g1ouJYKA"),
        (StandardWebhookSignatureTests.id, "1732450000", "v1,AAAA"),
        (StandardWebhookSignatureTests.id, "1732450000", "v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg=="),
    ])
    func malformed(_ id: String, _ timestamp: String, _ signature: String) throws {
        let secret = try Self.secret(Self.standard)
        #expect(throws: StandardWebhookSignature.Failure.malformedHeader) {
            try StandardWebhookSignature.verify(id: id, timestamp: timestamp, signature: signature, body: Self.body, secret: secret, now: Self.sent)
        }
    }

    @Test("an unknown version beside a matching v1 is ignored")
    func otherVersions() throws {
        let secret = try Self.secret(Self.standard)
        let headers = StandardWebhookSignature.headers(id: Self.id, body: Self.body, secrets: [secret], at: Self.sent)
        let signature = "v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg== v2,xyz " + headers.signature
        #expect(try StandardWebhookSignature.verify(id: Self.id, timestamp: "1732450000", signature: signature, body: Self.body, secret: secret, now: Self.sent) == Self.sent)
    }

    @Test("a secret is whsec_ + base64 (the decoded bytes) or plain (its UTF-8 bytes); shorter than 16 bytes is refused", arguments: [
        ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", WebhookSecret.Form.standard, 24, false),
        ("whsec_cGxhaW4tc2VjcmV0LTAxMjM0NTY3ODk=", .standard, 23, false),
        ("whsec_cGxhaW4tc2VjcmV0LTAxMjM0NTY3ODk", .standard, 23, false),  // unpadded, as the libraries accept
        ("whsec_test-secret-0123456789", .plain, 28, true),  // '-' is not base64: plain
        ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS w", .plain, 39, true),
        ("plain-secret-0123456789", .plain, 23, false),
    ])
    func forms(_ text: String, _ form: WebhookSecret.Form, _ keyLength: Int, _ looksStandard: Bool) throws {
        let secret = try WebhookSecret(text)
        #expect(secret.form == form)
        #expect(secret.standardKey.count == keyLength)
        #expect(secret.looksStandardButIsPlain == looksStandard)
        #expect(secret.text == text)
        #expect(!"\(secret)".contains(text) && !String(reflecting: secret).contains(text))
    }

    @Test("short secrets are refused", arguments: ["", "short", "whsec_AAAAAAAAA"])
    func short(_ text: String) {
        #expect(throws: WebhookConfigurationError.self) { try WebhookSecret(text) }
    }

    @Test("a generated secret is whsec_ + base64 of 32 random bytes, a new one each time")
    func generated() throws {
        let one = WebhookSecret.generate()
        let two = WebhookSecret.generate()
        #expect(one != two)
        let secret = try WebhookSecret(one)
        #expect(secret.form == .standard && secret.standardKey.count == 32)
    }

    @Test("an endpoint takes one secret or several distinct ones, and warns about ambiguous or short ones")
    func endpointSecrets() throws {
        let endpoint = try WebhookEndpoint(name: "app", url: "https://example.com/hook", secrets: [Self.standard, Self.plain])
        #expect(endpoint.secrets.map(\.text) == [Self.standard, Self.plain])
        #expect(endpoint.secretWarnings.isEmpty)
        #expect(try WebhookEndpoint(name: "app", url: "https://example.com/hook", secret: Self.plain).secrets.map(\.text) == [Self.plain])
        #expect(throws: WebhookConfigurationError.self) { try WebhookEndpoint(name: "app", url: "https://example.com/hook", secrets: []) }
        #expect(throws: WebhookConfigurationError.self) { try WebhookEndpoint(name: "app", url: "https://example.com/hook", secrets: [Self.plain, Self.plain]) }
        #expect(throws: WebhookConfigurationError.self) { try WebhookEndpoint(name: "app", url: "https://example.com/hook", secrets: [Self.plain, "short"]) }
        let warned = try WebhookEndpoint(name: "app", url: "https://example.com/hook", secrets: ["whsec_test-secret-0123456789", "whsec_0123456789abcdef"])
        #expect(warned.secretWarnings.count == 2)
        #expect(warned.secretWarnings.allSatisfy { !$0.contains("test-secret") && !$0.contains("0123456789abcdef") })
    }
}
