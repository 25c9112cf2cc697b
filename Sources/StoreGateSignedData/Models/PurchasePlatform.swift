/// The platform on which the customer originally bought the app.
///
/// Apple's `originalPlatform`. Unknown values are kept as their raw value, never dropped.
public struct PurchasePlatform: AppleEnumeration {
    /// The value as Apple writes it.
    public let rawValue: String

    /// Wraps a value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// iOS, iPadOS.
    public static let iOS = PurchasePlatform(rawValue: "iOS")

    /// macOS.
    public static let macOS = PurchasePlatform(rawValue: "macOS")

    /// tvOS.
    public static let tvOS = PurchasePlatform(rawValue: "tvOS")

    /// visionOS.
    public static let visionOS = PurchasePlatform(rawValue: "visionOS")
}
