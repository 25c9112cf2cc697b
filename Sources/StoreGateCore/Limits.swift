/// Explicit size limits for untrusted input. Every parser checks them before work begins.
public struct Limits: Sendable, Hashable {
    /// Largest app receipt accepted, in bytes of DER (after base64 decoding).
    /// The largest real receipt in the fixtures (187 purchases) is 79 KB.
    public var maxReceiptBytes: Int
    /// Largest compact JWS accepted, in bytes (a notification with nested JWS is about 10 KB).
    public var maxJWSBytes: Int
    /// Most in-app purchase entries read from one receipt.
    public var maxInAppPurchases: Int

    public init(maxReceiptBytes: Int = 2 << 20, maxJWSBytes: Int = 256 << 10, maxInAppPurchases: Int = 100_000) {
        self.maxReceiptBytes = maxReceiptBytes
        self.maxJWSBytes = maxJWSBytes
        self.maxInAppPurchases = maxInAppPurchases
    }

    /// The defaults: 2 MiB receipts, 256 KiB JWS, 100,000 purchases per receipt.
    public static let `default` = Limits()
}
