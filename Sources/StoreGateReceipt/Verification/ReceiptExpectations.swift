public import Foundation
public import StoreGateCore

/// Everything the caller expects of a receipt, as one value.
///
/// Only ``bundleId`` is required. The environments default to production and the sandbox
/// (App Review buys in the sandbox); Xcode receipts need ``AppStoreEnvironment/xcode`` here *and*
/// their certificate as an opt-in anchor.
public struct ReceiptExpectations: Sendable, Hashable {
    /// The app the receipt must be for.
    public var bundleId: String
    /// The app version the receipt must name (CFBundleVersion on iOS), if checked.
    public var appVersion: String?
    /// The app versions accepted at all (a service's configuration); empty accepts any. A
    /// receipt must name one of them, and ``appVersion``, when set, must be one of them too.
    public var acceptedAppVersions: Set<String> = []
    /// The device the receipt must have been issued to, if checked.
    public var device: DeviceIdentifier?
    /// The environments accepted; the verdict always reports the one found.
    public var environments: Set<AppStoreEnvironment>
    /// Refuse a receipt whose expiration date (field 21) has passed.
    public var rejectsExpiredReceipt: Bool
    /// A product the receipt must contain.
    public var productId: String?
    /// A transaction the receipt must contain (with ``productId``, if both are given).
    public var transactionId: String?

    public init(
        bundleId: String,
        appVersion: String? = nil,
        device: DeviceIdentifier? = nil,
        environments: Set<AppStoreEnvironment> = AppStoreEnvironment.defaultAccepted,
        rejectsExpiredReceipt: Bool = true,
        productId: String? = nil,
        transactionId: String? = nil
    ) {
        self.bundleId = bundleId
        self.appVersion = appVersion
        self.device = device
        self.environments = environments
        self.rejectsExpiredReceipt = rejectsExpiredReceipt
        self.productId = productId
        self.transactionId = transactionId
    }
}

/// The device identifier an app receipt's hash is computed from.
public struct DeviceIdentifier: Sendable, Hashable {
    /// The identifier's bytes: 16 for iOS's identifierForVendor, 6 for a macOS MAC address.
    public let bytes: [UInt8]

    /// iOS: `UIDevice.current.identifierForVendor`, as its 16 UUID bytes.
    public static func identifierForVendor(_ uuid: UUID) -> DeviceIdentifier {
        let u = uuid.uuid
        return DeviceIdentifier(bytes: [
            u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15,
        ])
    }

    /// macOS: the primary network interface's 6-byte MAC address.
    public static func macAddress(_ bytes: [UInt8]) -> DeviceIdentifier? {
        bytes.count == 6 ? DeviceIdentifier(bytes: bytes) : nil
    }

    /// Raw identifier bytes: 16 (identifierForVendor) or 6 (MAC address); `nil` otherwise.
    public init?(rawBytes: [UInt8]) {
        guard rawBytes.count == 16 || rawBytes.count == 6 else { return nil }
        self.bytes = rawBytes
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }
}

/// The result of one expectation check, for reports.
public struct ExpectationCheck: Sendable, Hashable, Codable {
    /// What was checked: `environment`, `bundle_id`, `app_version`, `device_hash`,
    /// `receipt_expiration`, `product`, `transaction`.
    public let name: String
    /// Whether it held; `nil` when not asked for.
    public let passed: Bool?
    /// What was found.
    public let detail: String
}
