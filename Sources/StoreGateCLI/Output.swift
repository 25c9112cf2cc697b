import Foundation
import Logging
import StoreGateCore

/// Printing helpers: JSON to standard output, one-line errors to standard error.
enum Output {
    /// Pretty, key-sorted JSON without escaped slashes.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// One step of a verification report: `PASS  chain        detail`.
    static func line(_ step: VerificationStepReport) -> String {
        let mark: String
        switch step.status {
        case .passed: mark = "PASS"
        case .failed: mark = "FAIL"
        case .notRun: mark = "----"
        }
        return "\(mark)  \(step.step.rawValue.padding(toLength: 13, withPad: " ", startingAt: 0))\(step.detail)"
    }

    /// The commands' logger for the libraries they call: warnings and worse, on standard error
    /// (standard output carries reports and JSON).
    static let logger: Logger = {
        var logger = Logger(label: "storegate", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .warning
        return logger
    }()

    /// One expectation under the expectations step: `        pass  bundle_id          detail`
    /// (`FAIL`, or `skip` when it was not checked).
    static func line(_ check: ExpectationCheck) -> String {
        let mark = check.passed.map { $0 ? "pass" : "FAIL" } ?? "skip"
        return "        \(mark)  \(check.name.padding(toLength: 19, withPad: " ", startingAt: 0))\(check.detail)"
    }

    /// Writes one line to standard error.
    static func error(_ message: String) {
        FileHandle.standardError.write(Data("storegate: \(message)\n".utf8))
    }
}
