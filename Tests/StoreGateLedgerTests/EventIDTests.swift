import Foundation
import Testing

@testable import StoreGateLedger

@Suite("Event ids")
struct EventIDTests {
    @Test("an event id is a lowercase RFC 9562 version-8 UUID, and no two are alike")
    func versionEight() throws {
        var seen: Set<String> = []
        for _ in 0..<2_000 {
            let id = EventPlanner.newID()
            #expect(id.utf8.count == 36)
            #expect(id == id.lowercased())
            let uuid = try #require(UUID(uuidString: id), "\(id)")
            #expect(uuid.uuidString.lowercased() == id)
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 8, "version 8: \(id)")
            #expect(bytes[8] >> 6 == 0b10, "variant 10: \(id)")
            seen.insert(id)
        }
        #expect(seen.count == 2_000)
    }
}
