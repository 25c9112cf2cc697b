public import StoreGateCore

/// Where verifyReceipt lives, per environment.
public struct VerifyReceiptEndpoints: Sendable, Hashable {
    /// The production endpoint.
    public var production: String
    /// The sandbox endpoint.
    public var sandbox: String

    /// Creates a value from its parts.
    public init(production: String, sandbox: String) {
        self.production = production
        self.sandbox = sandbox
    }

    /// Apple's endpoints: `https://buy.itunes.apple.com/verifyReceipt` and
    /// `https://sandbox.itunes.apple.com/verifyReceipt`.
    public static let apple = VerifyReceiptEndpoints(
        production: "https://buy.itunes.apple.com/verifyReceipt",
        sandbox: "https://sandbox.itunes.apple.com/verifyReceipt"
    )

    /// A stand-in for Apple at `base` (such as StoreGate's test stand-in): production at
    /// `base/production/verifyReceipt`, sandbox at `base/sandbox/verifyReceipt`.
    public init(standIn base: String) {
        let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.init(production: trimmed + "/production/verifyReceipt", sandbox: trimmed + "/sandbox/verifyReceipt")
    }

    /// The endpoint of `environment`: production or sandbox, nothing else.
    public func url(for environment: AppStoreEnvironment) -> String? {
        switch environment {
        case .production: return production
        case .sandbox: return sandbox
        default: return nil
        }
    }
}
