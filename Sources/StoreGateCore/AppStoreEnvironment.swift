/// The App Store environment a proof of purchase belongs to.
///
/// One vocabulary for every proof: app receipts name their type (`Production`,
/// `ProductionSandbox`, `Xcode`, …), StoreKit 2 JWS name an environment (`Production`,
/// `Sandbox`, `Xcode`, `LocalTesting`). Both map onto this type. A proof verified by an
/// opt-in anchor (a test CA, Xcode's StoreKit Testing certificate) is never reported as
/// ``production`` or ``sandbox``: it is ``xcode`` or ``test``.
///
/// Unknown values are kept as their raw string, never dropped.
public struct AppStoreEnvironment: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Real purchases, signed by Apple's production systems.
    public static let production = AppStoreEnvironment(rawValue: "Production")
    /// Apple's sandbox: TestFlight, App Review and sandbox testers.
    public static let sandbox = AppStoreEnvironment(rawValue: "Sandbox")
    /// StoreKit Testing in Xcode; only ever verified against an opt-in anchor.
    public static let xcode = AppStoreEnvironment(rawValue: "Xcode")
    /// Apple's local testing environment (StoreKit 2 `LocalTesting`).
    public static let localTesting = AppStoreEnvironment(rawValue: "LocalTesting")
    /// A proof verified by an opt-in test anchor (for example StoreGate's own test CA).
    public static let test = AppStoreEnvironment(rawValue: "Test")

    /// The environments a verifier accepts unless told otherwise: production and the
    /// sandbox (App Review buys in the sandbox).
    public static let defaultAccepted: Set<AppStoreEnvironment> = [.production, .sandbox]

    /// Maps an app receipt's type (field 0) onto an environment.
    ///
    /// `ProductionSandbox` and `ProductionVPPSandbox` are the sandbox; `Production` and
    /// `ProductionVPP` are production; anything else is kept by its raw value.
    public init(receiptType: String) {
        switch receiptType {
        case "Production", "ProductionVPP": self = .production
        case "ProductionSandbox", "ProductionVPPSandbox", "Sandbox": self = .sandbox
        case "Xcode": self = .xcode
        default: self = AppStoreEnvironment(rawValue: receiptType)
        }
    }

    /// Parses a name given on a command line or in configuration, case-insensitively
    /// (`production`, `sandbox`, `productionsandbox`, `xcode`, `localtesting`, `test`).
    public init?(name: String) {
        switch name.lowercased() {
        case "production": self = .production
        case "sandbox", "productionsandbox": self = .sandbox
        case "xcode": self = .xcode
        case "localtesting": self = .localTesting
        case "test": self = .test
        default: return nil
        }
    }

    /// Whether this environment may hold real money: only ``production``.
    public var isProduction: Bool { self == .production }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
