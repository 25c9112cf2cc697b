import StoreGateCore

/// `inspect` and `verify` for StoreKit 2 JWS. (Owned by the SignedData work, issue #3.)
enum SignedDataCLI {
    static func inspect(compact: String) throws -> String {
        throw CLIError("JWS support is not built yet")
    }

    static func verify(compact: String, options: VerifyOptions) async throws -> Bool {
        throw CLIError("JWS support is not built yet")
    }
}
