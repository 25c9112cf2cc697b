import Foundation
import StoreGateTestSupport
import Testing

@Suite("storegate sync")
struct SyncCLITests {
    @Test("without STOREGATE_API_KEY it refuses to call; a service that does not answer fails with the reason")
    func refusals() async throws {
        let noKey = try await CLI.run(["sync", "status"], environment: ["STOREGATE_API_KEY": ""])
        #expect(noKey.status != 0)
        #expect(noKey.stderr.contains("STOREGATE_API_KEY"))
        let port = try FreePort.next()
        let unreachable = try await CLI.run(
            ["sync", "account", "alice", "--url", "http://127.0.0.1:\(port)", "--timeout", "5"],
            environment: ["STOREGATE_API_KEY": "key-0123456789abcdef"]
        )
        #expect(unreachable.status == 1)
        #expect(unreachable.stderr.contains("cannot reach http://127.0.0.1:\(port)"))
    }
}
