import Foundation
import StoreGateLedger
import StoreGateTestSupport
import Testing

@testable import StoreGateLedgerSQLite

extension LedgerTests {
    /// `storegate-dev bench scale` at the smallest sizes it takes (hundreds of transactions,
    /// a handful of samples: about a second of CPU in debug): its output format and its
    /// `--fail-above` verdict. Timing is never asserted (CI runs every suite at once on two
    /// cores; the scale targets are measured by CI's own `bench scale` step, in release): the
    /// failing case uses a limit below 1, which the smallest size's own figures (1.00×)
    /// exceed on any machine, and the passing case one no figure can reach.
    @Suite("Scale benchmark smoke")
    struct ScaleBenchmarkSmoke {
        /// The figures `--fail-above` holds: per-request costs, the check and the account read
        /// with every read from the database.
        static let perRequest = [
            "the check, every read from the database", "account's entitlements, from the database", "record a purchase, 1 writer",
            "record a purchase, 16 writers", "consume a unit, 1 writer", "apply a synced notification, 1 writer", "a page of 100 events",
        ]
        /// The figures it does not hold: the check and the account read through the account
        /// cache (between sizes, a hit-rate comparison).
        static let notHeld = ["one entitlement (the check), 1 reader", "entitlements of an account, 1 reader"]
        /// The console's pages, which `--pages-within` holds to their p95 at the smallest size.
        static let pages = [
            "console: account page", "console: search an account", "console: search a transaction id", "console: overview (8 series, 90 days)",
        ]
        static let sizes = ["100", "200"]

        /// Runs `bench scale` on SQLite at ``sizes`` with `--fail-above limit`; its exit status and output.
        static func run(
            failAbove limit: String, pagesWithin: String? = nil, keep: String? = nil, _ extra: [String] = []
        ) async throws -> (status: Int32?, lines: [String], text: String) {
            let binary = try StoreGateBinary.locate()
            let output = try TemporaryFiles.directory("scale").appendingPathComponent("scale.log").path
            defer { try? FileManager.default.removeItem(atPath: output) }  // best effort: a temporary file
            let child = try ChildProcess.spawn(binary, [
                "bench", "scale", "--backend", "sqlite", "--sizes", sizes.joined(separator: ","), "--samples", "6", "--rounds", "2",
                "--fail-above", limit,
            ] + (pagesWithin.map { ["--pages-within", $0] } ?? []) + (keep.map { ["--keep", $0] } ?? []) + extra, outputPath: output)
            // A deadline that tells a stuck run from a slow one (the run takes seconds).
            let deadline = Date().addingTimeInterval(120)
            var status: Int32?
            while status == nil, Date() < deadline {
                status = child.poll()
                if status == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            if status == nil {
                child.kill()
                child.wait()
            }
            let text = child.output()
            return (status, text.split(separator: "\n").map(String.init), text)
        }

        /// The start of a figure's line at `size`: the backend and the size, in their columns.
        static func row(_ size: String) -> String {
            "sqlite".padding(toLength: 10, withPad: " ", startingAt: 0) + size.padding(toLength: 11, withPad: " ", startingAt: 0)
        }

        @Test("every figure at every size, with its ratio, the disk per transaction and the RSS; within a limit no figure reaches, it passes")
        func format() async throws {
            let (status, lines, text) = try await Self.run(failAbove: "1000000", pagesWithin: "1000000")
            try #require(status == 0, "bench scale ended with \(String(describing: status)): \(text.suffix(1500))")
            #expect(lines.first?.hasPrefix("scale (") == true)
            #expect(lines.first?.contains("6 samples per operation and size in 2 rounds after a warm-up") == true)
            for size in Self.sizes {
                #expect(lines.contains { $0.hasPrefix("sqlite \(size) transactions") && $0.contains("built by the bulk path") }, "\(size)")
                #expect(lines.contains { $0.hasPrefix(Self.row(size) + "disk: ") && $0.contains("bytes per transaction") }, "\(size)")
                #expect(lines.contains { $0.hasPrefix(Self.row(size) + "RSS while measuring: ") }, "\(size)")
                for operation in Self.perRequest {
                    #expect(lines.filter { $0.hasPrefix(Self.row(size) + operation) && $0.hasSuffix("×") }.count == 1, "\(size): \(operation)")
                }
                for operation in Self.notHeld {
                    #expect(lines.filter { $0.hasPrefix(Self.row(size) + operation) && $0.hasSuffix("×  (not held)") }.count == 1, "\(size): \(operation)")
                }
                for page in Self.pages {
                    #expect(lines.filter { $0.hasPrefix(Self.row(size) + page) && $0.contains("×  (p50 held to ") && $0.hasSuffix(" µs)") }.count == 1, "\(size): \(page)")
                }
            }
            // The smallest size is its own baseline.
            let smallest = lines.filter { $0.hasPrefix(Self.row("100")) && $0.contains("×") }
            #expect(smallest.count == Self.perRequest.count + Self.notHeld.count + Self.pages.count)
            #expect(smallest.allSatisfy { $0.contains("1.00×") })
            #expect(
                lines.last
                    == "every per-request figure is within 1000000.0× of the smallest size; every console page's p50 is within 1000000.0 × its p95 at the smallest size (the account cache's lines are not held)"
            )
        }

        @Test("a per-request figure above the limit fails the run and is named; without --pages-within the console's pages are not held, nor the account cache's lines")
        func failAbove() async throws {
            let (status, _, text) = try await Self.run(failAbove: "0.5")
            #expect(status == 1, "\(text.suffix(1500))")
            // Every per-request figure of the smallest size is 1.00×, above 0.5.
            for operation in Self.perRequest {
                #expect(text.contains("sqlite \(operation) at 100: 1.00×"), "\(operation)")
            }
            for figure in Self.notHeld + Self.pages {
                #expect(!text.contains("sqlite \(figure) at"), "\(figure)")
            }
            #expect(text.contains(" figure(s) above their bound: "))
            #expect(!text.contains("every per-request figure is within"))
        }

        @Test("a console page whose p50 is above --pages-within times its p95 at the smallest size fails the run and is named")
        func pagesWithin() async throws {
            // A p50 is never below a ten-thousandth of the same samples' p95.
            let (status, _, text) = try await Self.run(failAbove: "1000000", pagesWithin: "0.0001")
            #expect(status == 1, "\(text.suffix(1500))")
            for page in Self.pages {
                #expect(text.contains("sqlite \(page) at 100: p50 "), "\(page)")
            }
            for figure in Self.perRequest + Self.notHeld {
                #expect(!text.contains("sqlite \(figure) at"), "\(figure)")
            }
            #expect(text.contains("\(Self.pages.count * Self.sizes.count) figure(s) above their bound: "))
            #expect(text.contains("above 0.0001 × the smallest size's p95"))
        }

        @Test("--keep leaves each size's ledger in the folder, openable, and refuses a folder that holds one already; --reuse measures them again")
        func keep() async throws {
            let directory = try TemporaryFiles.directory("scale-keep")
            defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder
            let (status, _, text) = try await Self.run(failAbove: "1000000", keep: directory.path)
            try #require(status == 0, "bench scale ended with \(String(describing: status)): \(text.suffix(1500))")
            for size in Self.sizes {
                let path = directory.appendingPathComponent("scale-\(size).sqlite").path
                #expect(FileManager.default.fileExists(atPath: path), "\(size)")
                // The kept file is a ledger: it opens and holds the story's first account.
                let ledger = try SQLiteLedger(path: path)
                let timeline = try await ledger.timeline(for: try AccountID("subscriber-0"), before: nil, limit: 1)
                await ledger.close()
                #expect(timeline.count == 1, "\(size)")
            }
            #expect(text.contains("sqlite ledgers kept in \(directory.path)"))
            // Their catalog, as a products file for `storegate serve`: the story's entitlement.
            let products = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("products.json")))
            let entitlements = (products as? [String: Any])?["entitlements"] as? [String: Any]
            #expect(((entitlements?["pro"] as? [String: Any])?["products"] as? [String])?.contains("pro.monthly") == true)
            // A second run into the same folder would add to the ledgers: refused before building.
            let (again, _, refusal) = try await Self.run(failAbove: "1000000", keep: directory.path)
            #expect(again != 0 && again != nil)
            #expect(refusal.contains("exists already"))
            #expect(!refusal.contains("transactions ("))
            // --reuse measures the kept ledgers without building, and its rounds write ids of
            // their own: the purchases they record are new to the ledger, not replays.
            let before = try await Self.measuredPurchases(directory)
            let (reused, reusedLines, reusedText) = try await Self.run(failAbove: "1000000", keep: directory.path, ["--reuse"])
            try #require(reused == 0, "bench scale --reuse ended with \(String(describing: reused)): \(reusedText.suffix(1500))")
            for size in Self.sizes {
                #expect(reusedLines.contains { $0.hasPrefix("sqlite \(size) transactions: reusing ") }, "\(size)")
                for operation in Self.perRequest {
                    #expect(reusedLines.filter { $0.hasPrefix(Self.row(size) + operation) }.count == 1, "\(size): \(operation)")
                }
            }
            #expect(!reusedText.contains("built by the bulk path"))
            let after = try await Self.measuredPurchases(directory)
            for size in Self.sizes {
                // Each run records a purchase per operation of its one-writer and sixteen-writer
                // lines: the warm-up and the rounds, 2 × 3 × 3 = 18 (6 samples over 2 rounds).
                #expect(after[size, default: 0] - before[size, default: 0] == 18, "\(size): \(before) → \(after)")
            }
            // --reuse needs --keep, and every size's ledger in it.
            let (withoutKeep, _, noKeep) = try await Self.run(failAbove: "1000000", keep: nil, ["--reuse"])
            #expect(withoutKeep != 0 && withoutKeep != nil)
            #expect(noKeep.contains("--reuse measures the SQLite ledgers of a --keep folder"))
            let empty = try TemporaryFiles.directory("scale-reuse-empty")
            defer { try? FileManager.default.removeItem(at: empty) }  // best effort: a temporary folder
            let (missing, _, missingText) = try await Self.run(failAbove: "1000000", keep: empty.path, ["--reuse"])
            #expect(missing != 0 && missing != nil)
            #expect(missingText.contains("does not exist"))
            #expect(!missingText.contains("transactions ("))
        }

        /// The measuring rounds' purchases in each kept ledger (their ids start with `scale-`; the story's with `s`).
        static func measuredPurchases(_ directory: URL) async throws -> [String: Int] {
            var counts: [String: Int] = [:]
            for size in sizes {
                let ledger = try SQLiteLedger(path: directory.appendingPathComponent("scale-\(size).sqlite").path)
                counts[size] = try ledger.read(snapshot: false) { connection throws(LedgerError) -> Int in
                    var count = 0
                    try connection.query("SELECT count(*) FROM ledger_transactions WHERE transaction_id LIKE 'scale-%'") { row throws(LedgerError) in
                        count = Int(row.integer(0))
                    }
                    return count
                }
                await ledger.close()
            }
            return counts
        }

        @Test("sizes under 100 transactions and no round are refused before anything is built")
        func refusals() async throws {
            let binary = try StoreGateBinary.locate()
            let directory = try TemporaryFiles.directory("scale")
            defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder
            for (index, arguments) in [["--sizes", "50,200"], ["--sizes", "100,x"], ["--sizes", "100", "--rounds", "0"]].enumerated() {
                let output = directory.appendingPathComponent("refused-\(index).log").path
                let child = try ChildProcess.spawn(binary, ["bench", "scale", "--backend", "sqlite"] + arguments, outputPath: output)
                let status = child.wait()
                let text = child.output()
                #expect(status != 0, "\(arguments): \(text)")
                #expect(!text.contains("transactions ("), "\(arguments): built something: \(text)")
            }
        }
    }
}
