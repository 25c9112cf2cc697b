public import StoreGateCore
public import StoreGateSignedData

/// Get App Transaction Info's answer: the customer's app transaction, verified.
public struct AppTransactionInfo: Sendable, Hashable, Encodable {
    /// The decoded, verified payload (Apple's `JWSAppTransactionDecodedPayload`).
    public let appTransaction: AppTransaction
    /// The environment StoreGate reports: the payload's `receiptType` for Apple-signed data,
    /// `Test` or `Xcode` for data an opt-in anchor signed.
    public let environment: AppStoreEnvironment
    /// The app's bundle id (the client's, checked).
    public let bundleId: String

    /// Creates a value from its parts.
    public init(appTransaction: AppTransaction, environment: AppStoreEnvironment, bundleId: String) {
        self.appTransaction = appTransaction
        self.environment = environment
        self.bundleId = bundleId
    }
}
