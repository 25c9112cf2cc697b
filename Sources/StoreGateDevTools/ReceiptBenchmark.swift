import Foundation
import StoreGateCore
import StoreGateReceipt
import StoreGateTestSupport

/// `storegate-dev bench receipt`: verification of real fixture receipts, cold and warm.
enum ReceiptBenchmark {
    struct Case {
        let name: String
        let file: String
        let bundleId: String
    }

    static let cases = [
        Case(name: "G5 SHA-256, 2 purchases", file: "receipts/tpinappreceipt-ios-sandbox-2025-sha256-g5.der", bundleId: "dev.bonzer.weeka.app"),
        Case(name: "SHA-1, 187 purchases", file: "receipts/tpinappreceipt-ios-sandbox-2020-sha1-187iap.der", bundleId: "com.nutcall.alert"),
    ]

    static func run(iterations: Int) async throws {
        guard Fixtures.directory != nil else {
            throw CLIError("the receipt benchmark needs ../shared/fixtures (or STOREGATE_FIXTURES)")
        }
        print("receipt verification (\(BenchSupport.isOptimized ? "release" : "DEBUG build: figures are not representative"), one core, \(iterations) iterations)")
        print("case                          cold median µs   warm median µs   warm p99 µs")
        for benchCase in cases {
            guard let bytes = Fixtures.bytes(benchCase.file) else { throw CLIError("missing fixture \(benchCase.file)") }
            let expectations = ReceiptExpectations(bundleId: benchCase.bundleId)

            let coldIterations = max(20, iterations / 20)
            let cold = try await BenchSupport.measure(iterations: coldIterations) {
                let verifier = ReceiptVerifier(chainVerifier: CertificateChainVerifier())
                _ = try await verifier.verify(bytes, expecting: expectations)
            }
            let verifier = ReceiptVerifier(chainVerifier: CertificateChainVerifier())
            _ = try await verifier.verify(bytes, expecting: expectations)
            let warm = try await BenchSupport.measure(iterations: iterations) {
                _ = try await verifier.verify(bytes, expecting: expectations)
            }
            print(
                benchCase.name.padding(toLength: 28, withPad: " ", startingAt: 0),
                BenchSupport.format(BenchSupport.median(cold)), "      ",
                BenchSupport.format(BenchSupport.median(warm)), "      ",
                BenchSupport.format(BenchSupport.percentile(warm, 0.99))
            )
        }

        // Peak memory while verifying the large receipt, above the process baseline.
        if let large = Fixtures.bytes(cases[1].file) {
            let verifier = ReceiptVerifier(chainVerifier: CertificateChainVerifier())
            let expectations = ReceiptExpectations(bundleId: cases[1].bundleId)
            _ = try await verifier.verify(large, expecting: expectations)
            if BenchSupport.resetPeakMemory(), let before = BenchSupport.memory() {
                for _ in 0..<200 {
                    _ = try await verifier.verify(large, expecting: expectations)
                }
                if let after = BenchSupport.memory() {
                    let delta = Double(after.peak - before.rss) / 1_048_576
                    print(String(format: "peak memory verifying the 187-purchase receipt: %.2f MB above a %.1f MB baseline", delta, Double(before.rss) / 1_048_576))
                }
            } else {
                print("peak memory: unavailable (needs Linux /proc/self/clear_refs)")
            }
        }
    }
}
