/// `inspect` and `verify` for app receipts.
enum ReceiptCLI {
    static func inspect(der: [UInt8]) throws -> String {
        throw CLIError("receipt support is not built yet")
    }

    static func verify(der: [UInt8], options: VerifyOptions) async throws -> Bool {
        throw CLIError("receipt support is not built yet")
    }
}
