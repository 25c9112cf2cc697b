public import Foundation

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
