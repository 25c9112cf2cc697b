import Foundation
import Logging
import StoreGateCore
@testable import StoreGateEvents
@testable import StoreGateLedger
import StoreGateLedgerSQLite
import StoreGateTestSupport
import StoreGateWorkers
import Testing

/// The clock service: a period that ends with no write still reaches the stream.
@Suite("Subscription clock")
struct SubscriptionClockTests {
    static let logger = Logger(label: "test.clock")

    /// Records an auto-renewable period for `account` ending at `end`.
    static func subscribe(_ ledger: any Ledger, _ account: String, id: String, end: Date) async throws {
        try await ledger.record(.subscriptionPeriod(id, bundleId: "com.example.app", endingAt: end), for: try AccountID(account))
    }

    @Test("a tick appends each due family's transition once, in batches, and nothing before its moment")
    func tick() async throws {
        let ledger = InMemoryLedger()
        let end = Date().addingTimeInterval(3600).ledgerNormalized
        for index in 0..<7 { try await Self.subscribe(ledger, "user-\(index)", id: "s\(index)", end: end) }
        let recorded = try await ledger.events(after: 0, limit: 1000).count
        let early = SubscriptionClockService(ledger: ledger, batch: 3, logger: Self.logger, now: { end.addingTimeInterval(-1) })
        #expect(await early.tick() == 0)
        let late = SubscriptionClockService(ledger: ledger, batch: 3, logger: Self.logger, now: { end.addingTimeInterval(60) })
        #expect(await late.tick() == 7)
        #expect(await late.tick() == 0)
        let appended = try await ledger.events(after: Int64(recorded), limit: 1000)
        #expect(appended.count == 7)
        #expect(appended.allSatisfy {
            $0.type == .subscriptionStateChanged && $0.source == LedgerEvent.timeSource && $0.occurredAt == end
                && $0.previousState == .active && $0.entitlement?.state == .expired
        })
        #expect(Set(appended.map(\.account.rawValue)).count == 7)
    }

    @Test("a ledger that fails leaves the families due and the service running")
    func failure() async throws {
        let ledger = InMemoryLedger()
        try await Self.subscribe(ledger, "alice", id: "s1", end: Date().addingTimeInterval(60))
        await ledger.close()
        let clock = SubscriptionClockService(ledger: ledger, logger: Self.logger, now: { Date().addingTimeInterval(120) })
        #expect(await clock.tick() == 0)
    }

    @Test("the running service appends a transition within its interval, on SQLite")
    func running() async throws {
        let directory = try TemporaryFiles.directory("clock")
        defer { try? FileManager.default.removeItem(at: directory) }
        let ledger = try SQLiteLedger(path: directory.appendingPathComponent("ledger.sqlite").path)
        // A period ending a moment from now; the service runs on the real clock.
        let end = Date().addingTimeInterval(0.5).ledgerNormalized
        try await Self.subscribe(ledger, "alice", id: "s1", end: end)
        let recorded = try await ledger.events(after: 0, limit: 1000).count
        let clock = SubscriptionClockService(ledger: ledger, interval: .milliseconds(100), logger: Self.logger)
        let running = Task { try await clock.run() }
        var appended: [LedgerEvent] = []
        for _ in 0..<100 where appended.isEmpty {
            try await Task.sleep(for: .milliseconds(50))
            appended = try await ledger.events(after: Int64(recorded), limit: 10)
        }
        running.cancel()
        _ = try? await running.value
        #expect(appended.map(\.type) == [.subscriptionStateChanged])
        #expect(appended.first?.occurredAt == end)
        #expect(appended.first.map { $0.recordedAt >= end } == true)
        await ledger.close()
    }
}
