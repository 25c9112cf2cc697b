import Foundation
import StoreGateTestSupport
import Testing

extension LedgerTests {
    /// `storegate-dev bench scale` at CI size: it builds two small ledgers through the bulk
    /// path on SQLite, measures every figure at both, and prints them with their ratios, the
    /// disk per transaction and the RSS. Timing is not asserted (CI runs every suite at once
    /// on two cores); only that every figure is there and the run ends well.
    @Suite("Scale benchmark smoke")
    struct ScaleBenchmarkSmoke {
        static let operations = [
            "one entitlement (the check), 1 reader", "entitlements of an account, 1 reader", "record a purchase, 1 writer",
            "record a purchase, 16 writers", "consume a unit, 1 writer", "apply a synced notification, 1 writer", "a page of 100 events",
            "console: account page", "console: search an account", "console: search a transaction id", "console: overview (8 series, 90 days)",
        ]

        @Test("bench scale --sizes 1000,3000 builds, measures and reports every figure at both sizes")
        func smoke() async throws {
            let binary = try StoreGateBinary.locate()
            let output = try TemporaryFiles.directory("scale").appendingPathComponent("scale.log").path
            defer { try? FileManager.default.removeItem(atPath: output) }  // best effort: a temporary file
            let child = try ChildProcess.spawn(binary, [
                "bench", "scale", "--backend", "sqlite", "--sizes", "1000,3000", "--samples", "40",
            ], outputPath: output)
            let deadline = Date().addingTimeInterval(240)
            var status: Int32?
            while status == nil, Date() < deadline {
                status = child.poll()
                if status == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            if status == nil { child.kill() }
            let text = child.output()
            try #require(status == 0, "bench scale ended with \(String(describing: status)): \(text.suffix(1500))")
            let lines = text.split(separator: "\n").map(String.init)
            /// The start of a figure's line at `size`: the backend and the size, in their columns.
            func row(_ size: String) -> String {
                "sqlite".padding(toLength: 10, withPad: " ", startingAt: 0) + size.padding(toLength: 11, withPad: " ", startingAt: 0)
            }
            for size in ["1000", "3000"] {
                #expect(lines.contains { $0.hasPrefix("sqlite \(size) transactions") && $0.contains("built by the bulk path") }, "\(size)")
                #expect(lines.contains { $0.hasPrefix(row(size) + "disk: ") && $0.contains("bytes per transaction") }, "\(size)")
                #expect(lines.contains { $0.hasPrefix(row(size) + "RSS while measuring: ") }, "\(size)")
                for operation in Self.operations {
                    #expect(lines.contains { $0.hasPrefix(row(size) + operation) && $0.hasSuffix("×") }, "\(size): \(operation)")
                }
            }
            // The smallest size is its own baseline.
            let smallest = lines.filter { $0.hasPrefix(row("1000")) && $0.hasSuffix("×") }
            #expect(smallest.count == Self.operations.count)
            #expect(smallest.allSatisfy { $0.hasSuffix("1.00×") })
        }
    }
}
