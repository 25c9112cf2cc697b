import Foundation
import StoreGateCore
import StoreGateSignedData
import StoreGateTestSupport

/// `storegate-dev bench jws`: verification of real Apple-signed JWS (a signed transaction, and a
/// notification with its nested transaction and renewal info), cold (empty chain cache) and
/// warm, next to Apple's Python `SignedDataVerifier` (offline) on the same JWS in the same run.
enum SignedDataBenchmark {
    static let transactionFile = "jws/gopay-sandbox-2022-11-signed-transaction-info-a.jws"
    static let transactionBundleId = "Com.VoiceRecording.Telephone"
    static let notificationFile = "jws/gopay-sandbox-2022-03-notification-did-renew.jws"
    static let notificationBundleId = "com.audaos.audarecorder"

    static func run(iterations: Int) async throws {
        guard Fixtures.directory != nil,
              let transaction = Fixtures.bytes(transactionFile),
              let notification = Fixtures.bytes(notificationFile)
        else {
            throw CLIError("the jws benchmark needs ../shared/fixtures (or STOREGATE_FIXTURES)")
        }
        let iterations = max(1, iterations)
        let build = isOptimized ? "release" : "DEBUG build: figures are not representative"
        print("StoreKit 2 JWS verification (\(build), one core, \(iterations) warm iterations)")

        let transactionVerifier = { (chains: CertificateChainVerifier) in
            SignedDataVerifier(expectations: .init(bundleId: transactionBundleId), chainVerifier: chains)
        }
        let notificationVerifier = { (chains: CertificateChainVerifier) in
            SignedDataVerifier(expectations: .init(bundleId: notificationBundleId), chainVerifier: chains)
        }
        // Correctness first: both verify, and the warm path really hits the cache.
        let chains = CertificateChainVerifier()
        _ = try await transactionVerifier(chains).verifyTransaction(bytes: transaction)
        guard try await transactionVerifier(chains).verifyTransaction(bytes: transaction).details.chainCacheHit else {
            throw CLIError("the warm path missed the chain cache")
        }
        _ = try await notificationVerifier(chains).verifyNotification(bytes: notification)

        let coldIterations = max(10, iterations / 20)
        let transactionCold = try await measure(coldIterations) {
            _ = try await transactionVerifier(CertificateChainVerifier()).verifyTransaction(bytes: transaction)
        }
        let warmTransactions = transactionVerifier(chains)
        let transactionWarm = try await measure(iterations) {
            _ = try await warmTransactions.verifyTransaction(bytes: transaction)
        }
        let notificationCold = try await measure(coldIterations) {
            _ = try await notificationVerifier(CertificateChainVerifier()).verifyNotification(bytes: notification)
        }
        let warmNotifications = notificationVerifier(chains)
        let notificationWarm = try await measure(max(1, iterations / 2)) {
            _ = try await warmNotifications.verifyNotification(bytes: notification)
        }

        // Where a warm transaction's time goes, apart from the ECDSA verification.
        let split = try await measure(iterations) {
            _ = try CompactJWS(bytes: transaction)
        }
        let payloadBytes = try CompactJWS(bytes: transaction).payload
        let decode = try await measure(iterations) {
            _ = try JWSTransactionDecodedPayload(json: payloadBytes)
        }

        print("case                                        cold median µs   warm median µs   warm p99 µs   warm per second")
        row("signed transaction (\(transaction.count) B)", transactionCold, transactionWarm)
        row("notification + 2 nested JWS (\(notification.count) B)", notificationCold, notificationWarm)
        print(String(format: "  of a warm transaction: split + base64url + header JSON %.1f µs, payload JSON %.1f µs; the rest is chain-cache lookup and ECDSA P-256", median(split), median(decode)))

        let python = runPython(iterations: min(iterations, 400))
        switch python {
        case .success(let figures):
            print("Apple's Python library (app-store-server-library \(figures.version), SignedDataVerifier offline, same JWS, same run):")
            print(String(format: "  signed transaction %10.1f µs median (%.0f/s)   StoreGate warm is %.1f× faster", figures.transaction, 1e6 / figures.transaction, figures.transaction / median(transactionWarm)))
            print(String(format: "  notification       %10.1f µs median (%.0f/s)   StoreGate warm is %.1f× faster", figures.notification, 1e6 / figures.notification, figures.notification / median(notificationWarm)))
        case .failure(let reason):
            print("Apple's Python library: skipped (\(reason.message))")
        }
    }

    // MARK: - Apple's Python library

    struct PythonFigures: Decodable {
        let version: String
        let transaction: Double
        let notification: Double
    }

    struct Skipped: Error {
        let message: String
    }

    /// Runs Scripts/bench_jws_python.py on the same fixtures, if python3 and the library are there.
    static func runPython(iterations: Int) -> Result<PythonFigures, Skipped> {
        let script = ProcessInfo.processInfo.environment["STOREGATE_PYTHON_BENCH"]
            ?? Fixtures.packageRoot.appendingPathComponent("Scripts/bench_jws_python.py").path
        guard FileManager.default.fileExists(atPath: script) else {
            return .failure(Skipped(message: "\(script) not found"))
        }
        guard let fixtures = Fixtures.directory else {
            return .failure(Skipped(message: "no fixtures"))
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            ProcessInfo.processInfo.environment["STOREGATE_PYTHON"] ?? "python3", script,
            "--fixtures", fixtures.path, "--iterations", String(iterations), "--json",
        ]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            return .failure(Skipped(message: "python3 could not be started"))
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let last = errorText.split(separator: "\n").last.map(String.init) ?? "exit \(process.terminationStatus)"
            return .failure(Skipped(message: last))
        }
        do {
            return .success(try JSONDecoder().decode(PythonFigures.self, from: data))
        } catch {
            return .failure(Skipped(message: "unreadable output of \(script)"))
        }
    }

    // MARK: - Measuring

    static func measure(_ iterations: Int, _ body: () async throws -> Void) async rethrows -> [Double] {
        var samples: [Double] = []
        samples.reserveCapacity(iterations)
        for _ in 0..<iterations {
            let start = DispatchTime.now().uptimeNanoseconds
            try await body()
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000)
        }
        return samples.sorted()
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, max(0, Int((Double(sorted.count) * p).rounded(.up)) - 1))]
    }

    static func median(_ sorted: [Double]) -> Double { percentile(sorted, 0.5) }

    static func row(_ name: String, _ cold: [Double], _ warm: [Double]) {
        let figures = String(format: " %14.1f   %14.1f   %11.1f   %15.0f", median(cold), median(warm), percentile(warm, 0.99), 1e6 / median(warm))
        print(name.padding(toLength: 43, withPad: " ", startingAt: 0) + figures)
    }

    static var isOptimized: Bool {
        #if DEBUG
        return false
        #else
        return true
        #endif
    }
}
