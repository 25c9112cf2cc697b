import Foundation
import StoreGateEvents
import Testing

@Suite("Webhook signatures")
struct WebhookSignatureTests {
    static let secret = "whsec_0123456789abcdef"
    static let body = Array(#"{"id":"e1"}"#.utf8)
    static let sent = Date(timeIntervalSince1970: 1_732_450_000)

    @Test("the header is t and the HMAC-SHA256 of \"t.body\" (Python's hmac agrees)")
    func knownVector() throws {
        let header = WebhookSignature.header(body: Self.body, secret: Self.secret, at: Self.sent.addingTimeInterval(0.9))
        #expect(header == "t=1732450000,v1=840cb08306830cd3f41141eecab5a657ae4e8d2eb5275187866ce523bb1c84fe")
        #expect(try WebhookSignature.verify(header: header, body: Self.body, secret: Self.secret, now: Self.sent.addingTimeInterval(60)) == Self.sent)
    }

    @Test("a changed body, another secret or an old timestamp is refused")
    func refusals() throws {
        let header = WebhookSignature.header(body: Self.body, secret: Self.secret, at: Self.sent)
        #expect(throws: WebhookSignature.Failure.mismatch) {
            try WebhookSignature.verify(header: header, body: Array(#"{"id":"e2"}"#.utf8), secret: Self.secret, now: Self.sent)
        }
        #expect(throws: WebhookSignature.Failure.mismatch) {
            try WebhookSignature.verify(header: header, body: Self.body, secret: "whsec_another-secret-000", now: Self.sent)
        }
        #expect(throws: WebhookSignature.Failure.outsideTolerance(seconds: 301)) {
            try WebhookSignature.verify(header: header, body: Self.body, secret: Self.secret, now: Self.sent.addingTimeInterval(301))
        }
        #expect(throws: WebhookSignature.Failure.outsideTolerance(seconds: 400)) {
            try WebhookSignature.verify(header: header, body: Self.body, secret: Self.secret, now: Self.sent.addingTimeInterval(-400))
        }
        // A signature for another timestamp does not move to this one.
        let moved = header.replacingOccurrences(of: "t=1732450000", with: "t=1732450100")
        #expect(throws: WebhookSignature.Failure.mismatch) {
            try WebhookSignature.verify(header: moved, body: Self.body, secret: Self.secret, now: Self.sent.addingTimeInterval(100))
        }
    }

    @Test("malformed headers are refused", arguments: [
        "", "t=1732450000", "v1=840cb08306830cd3f41141eecab5a657ae4e8d2eb5275187866ce523bb1c84fe", "t=abc,v1=00",
        "t=1732450000,v1=zz", "t=1732450000,v1=840c", "t=1,t=2,v1=840cb08306830cd3f41141eecab5a657ae4e8d2eb5275187866ce523bb1c84fe",
        "garbage", "t=-5,v1=840cb08306830cd3f41141eecab5a657ae4e8d2eb5275187866ce523bb1c84fe",
    ])
    func malformed(_ header: String) {
        #expect(throws: WebhookSignature.Failure.malformedHeader) {
            try WebhookSignature.verify(header: header, body: Self.body, secret: Self.secret, now: Self.sent)
        }
    }

    @Test("during a rotation any one matching v1 is enough; unknown schemes are ignored")
    func rotation() throws {
        let good = WebhookSignature.header(body: Self.body, secret: Self.secret, at: Self.sent)
        let other = WebhookSignature.header(body: Self.body, secret: "whsec_the-old-secret-0000", at: Self.sent)
        let combined = good + "," + other.split(separator: ",")[1] + ",v0=whatever"
        #expect(try WebhookSignature.verify(header: combined, body: Self.body, secret: Self.secret, now: Self.sent) == Self.sent)
        #expect(try WebhookSignature.verify(header: combined, body: Self.body, secret: "whsec_the-old-secret-0000", now: Self.sent) == Self.sent)
    }
}
