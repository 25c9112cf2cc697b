import Foundation
import StoreGateEvents
import Testing

@Suite("storegate webhook verify")
struct WebhookCLITests {
    static let secret = "whsec_cli-secret-0123456789"

    @Test("a delivery's signature verifies by hand; a changed body, another secret or an old signature does not")
    func verify() async throws {
        let body = Array(#"{"id":"0d1c","type":"purchase.recorded"}"#.utf8)
        let file = try CLI.temporaryFile(body, name: "body.json")
        let header = WebhookSignature.header(body: body, secret: Self.secret, at: Date())
        let good = try await CLI.run(["webhook", "verify", "--signature", header, "--body", file.path], environment: ["STOREGATE_WEBHOOK_SECRET": Self.secret])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout.hasPrefix("valid: signed at"))
        let piped = try await CLI.run(["webhook", "verify", "--signature", header, "--body", "-"], stdin: Data(body), environment: ["STOREGATE_WEBHOOK_SECRET": Self.secret])
        #expect(piped.status == 0)

        let changed = try CLI.temporaryFile(Array(#"{"id":"0d1c","type":"purchase.recordeD"}"#.utf8), name: "changed.json")
        let tampered = try await CLI.run(["webhook", "verify", "--signature", header, "--body", changed.path], environment: ["STOREGATE_WEBHOOK_SECRET": Self.secret])
        #expect(tampered.status == 1)
        #expect(tampered.stdout.contains("no signature matches"))
        let wrongSecret = try await CLI.run(["webhook", "verify", "--signature", header, "--body", file.path], environment: ["STOREGATE_WEBHOOK_SECRET": "whsec_some-other-secret-00"])
        #expect(wrongSecret.status == 1)

        let old = WebhookSignature.header(body: body, secret: Self.secret, at: Date().addingTimeInterval(-3600))
        let stale = try await CLI.run(["webhook", "verify", "--signature", old, "--body", file.path], environment: ["STOREGATE_WEBHOOK_SECRET": Self.secret])
        #expect(stale.status == 1)
        #expect(stale.stdout.contains("outside the tolerance"))
        let macOnly = try await CLI.run(["webhook", "verify", "--signature", old, "--body", file.path, "--tolerance", "0"], environment: ["STOREGATE_WEBHOOK_SECRET": Self.secret])
        #expect(macOnly.status == 0)

        let noSecret = try await CLI.run(["webhook", "verify", "--signature", header, "--body", file.path], environment: ["STOREGATE_WEBHOOK_SECRET": ""])
        #expect(noSecret.status != 0)
        #expect(noSecret.stderr.contains("STOREGATE_WEBHOOK_SECRET"))
    }
}
