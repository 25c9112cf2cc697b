import Foundation

/// Printing helpers: JSON to standard output, one-line errors to standard error.
enum Output {
    /// Pretty, key-sorted JSON without escaped slashes.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Writes one line to standard error.
    static func error(_ message: String) {
        FileHandle.standardError.write(Data("storegate: \(message)\n".utf8))
    }
}
