import Crypto
import Foundation
public import StoreGateCore

/// The built-in checks ``ReceiptExpectations`` makes from its fields, each a small value
/// named as reports name it.
extension ReceiptExpectations {
    /// `environment`: the environment StoreGate reports is one of the accepted ones.
    public struct Environment: ReceiptExpectation, Hashable {
        /// The environments accepted.
        public let accepted: Set<AppStoreEnvironment>

        /// `environment`.
        public var name: String { "environment" }

        /// - Parameter accepted: The environments accepted.
        public init(accepted: Set<AppStoreEnvironment>) {
            self.accepted = accepted
        }

        /// Fails with ``ReceiptError/Code/environmentNotAccepted`` unless the reported environment is accepted.
        public func evaluate(_ claims: ReceiptClaims) -> ExpectationResult<ReceiptError> {
            let environment = claims.environment
            let list = accepted.map(\.rawValue).sorted().joined(separator: ", ")
            let detail = "\(environment) (accepted: \(list))"
            guard accepted.contains(environment) else {
                return .fails(
                    ReceiptError(.environmentNotAccepted, field: ReceiptField.receiptType.label, reason: "environment \(environment) is not accepted (\(list))"),
                    detail: detail)
            }
            return .holds(detail)
        }
    }

    /// `bundle_id`: the receipt is for this app (compared exactly).
    public struct BundleId: ReceiptExpectation, Hashable {
        /// The app the receipt must be for.
        public let bundleId: String

        /// `bundle_id`.
        public var name: String { "bundle_id" }

        /// - Parameter bundleId: The app the receipt must be for.
        public init(_ bundleId: String) {
            self.bundleId = bundleId
        }

        /// Fails with ``ReceiptError/Code/bundleIdMismatch`` when the receipt names another app.
        public func evaluate(_ claims: ReceiptClaims) -> ExpectationResult<ReceiptError> {
            let found = claims.receipt.bundleId
            guard found == bundleId else {
                return .fails(
                    ReceiptError(.bundleIdMismatch, field: ReceiptField.bundleId.label, reason: "the receipt is for \(found), not \(bundleId)"),
                    detail: found)
            }
            return .holds(found)
        }
    }

    /// `app_version`: the receipt names the expected app version, and one of the accepted ones.
    public struct AppVersion: ReceiptExpectation, Hashable {
        /// The app version the receipt must name; `nil` checks only ``accepted``.
        public let appVersion: String?
        /// The app versions accepted at all; empty accepts any.
        public let accepted: Set<String>

        /// `app_version`.
        public var name: String { "app_version" }

        /// - Parameters:
        ///   - appVersion: The app version the receipt must name, if any.
        ///   - accepted: The app versions accepted at all; empty accepts any.
        public init(_ appVersion: String?, accepted: Set<String> = []) {
            self.appVersion = appVersion
            self.accepted = accepted
        }

        /// Fails with ``ReceiptError/Code/appVersionMismatch`` when the receipt names another
        /// version, or one not accepted; not checked when neither is set.
        public func evaluate(_ claims: ReceiptClaims) -> ExpectationResult<ReceiptError> {
            let found = claims.receipt.appVersion
            if let appVersion {
                guard found == appVersion, accepted.isEmpty || accepted.contains(appVersion) else {
                    return .fails(
                        ReceiptError(.appVersionMismatch, field: ReceiptField.appVersion.label, reason: "the receipt names version \(found), not \(appVersion)"),
                        detail: found)
                }
                return .holds(found)
            }
            guard !accepted.isEmpty else {
                return .notChecked("\(found) (not checked)")
            }
            let detail = "\(found) (accepted: \(accepted.sorted().joined(separator: ", ")))"
            guard accepted.contains(found) else {
                return .fails(
                    ReceiptError(.appVersionMismatch, field: ReceiptField.appVersion.label, reason: "the receipt names app version \(found), which is not accepted"),
                    detail: detail)
            }
            return .holds(detail)
        }
    }

    /// `device_hash`: the receipt was issued to this device (SHA-1 of the device identifier,
    /// the opaque value and the bundle id bytes equals the receipt's hash).
    public struct DeviceHash: ReceiptExpectation, Hashable {
        /// The device the receipt must have been issued to; `nil` checks nothing.
        public let device: DeviceIdentifier?

        /// `device_hash`.
        public var name: String { "device_hash" }

        /// - Parameter device: The device the receipt must have been issued to, if checked.
        public init(_ device: DeviceIdentifier?) {
            self.device = device
        }

        /// Fails with ``ReceiptError/Code/deviceHashMismatch`` when the receipt was issued to
        /// another device; not checked without a device.
        public func evaluate(_ claims: ReceiptClaims) -> ExpectationResult<ReceiptError> {
            guard let device else {
                return .notChecked("not checked (no device id given)")
            }
            let receipt = claims.receipt
            let computed = Array(Insecure.SHA1.hash(data: device.bytes + receipt.opaqueValue + receipt.bundleIdData))
            guard computed == receipt.sha1Hash else {
                return .fails(
                    ReceiptError(.deviceHashMismatch, field: ReceiptField.sha1Hash.label, reason: "the receipt was not issued to this device"),
                    detail: "issued to another device")
            }
            return .holds("matches this device")
        }
    }

    /// `receipt_expiration`: the receipt's own expiration date (field 21), when it has one,
    /// has not passed by the verifier's clock.
    public struct ReceiptExpiration: ReceiptExpectation, Hashable {
        /// Whether an expired receipt is refused; `false` reports the date only.
        public let isEnforced: Bool

        /// `receipt_expiration`.
        public var name: String { "receipt_expiration" }

        /// - Parameter isEnforced: Whether an expired receipt is refused.
        public init(isEnforced: Bool) {
            self.isEnforced = isEnforced
        }

        /// Fails with ``ReceiptError/Code/receiptExpired`` when enforced and the expiration
        /// date has passed; not checked when not enforced or the receipt has no such date.
        public func evaluate(_ claims: ReceiptClaims) -> ExpectationResult<ReceiptError> {
            guard let expiration = claims.receipt.expirationDate else {
                return .notChecked("no expiration date")
            }
            guard isEnforced else {
                return .notChecked("expires \(expiration) (not checked)")
            }
            guard expiration > claims.now else {
                return .fails(
                    ReceiptError(.receiptExpired, field: ReceiptField.expirationDate.label, reason: "the receipt expired at \(expiration)"),
                    detail: "expires \(expiration)")
            }
            return .holds("expires \(expiration)")
        }
    }

    /// `transaction`: the receipt contains this transaction.
    public struct Transaction: ReceiptExpectation, Hashable {
        /// The transaction the receipt must contain; `nil` checks nothing.
        public let transactionId: String?

        /// `transaction`.
        public var name: String { "transaction" }

        /// - Parameter transactionId: The transaction the receipt must contain, if checked.
        public init(_ transactionId: String?) {
            self.transactionId = transactionId
        }

        /// Fails with ``ReceiptError/Code/transactionNotFound`` when the receipt does not
        /// contain the transaction; not checked without one.
        public func evaluate(_ claims: ReceiptClaims) -> ExpectationResult<ReceiptError> {
            guard let transactionId else {
                return .notChecked("not checked (no transaction id given)")
            }
            guard let entry = claims.receipt.inAppPurchases.first(where: { $0.transactionId == transactionId }) else {
                return .fails(
                    ReceiptError(.transactionNotFound, field: ReceiptField.transactionId.label, reason: "the receipt does not contain transaction \(transactionId)"),
                    detail: "\(transactionId) not in the receipt")
            }
            return .holds("\(transactionId) (\(entry.productId))")
        }
    }

    /// `product`: the receipt contains this product — in the expected transaction, when one is
    /// expected too.
    public struct Product: ReceiptExpectation, Hashable {
        /// The product the receipt must contain; `nil` checks nothing.
        public let productId: String?
        /// The transaction that must be for the product, if one is expected.
        public let transactionId: String?

        /// `product`.
        public var name: String { "product" }

        /// - Parameters:
        ///   - productId: The product the receipt must contain, if checked.
        ///   - transactionId: The transaction that must be for it, if one is expected.
        public init(_ productId: String?, inTransaction transactionId: String? = nil) {
            self.productId = productId
            self.transactionId = transactionId
        }

        /// Fails with ``ReceiptError/Code/productNotFound`` when the receipt (or the expected
        /// transaction) is for another product; not checked without a product, or when the
        /// expected transaction is not in the receipt (``Transaction`` fails then).
        public func evaluate(_ claims: ReceiptClaims) -> ExpectationResult<ReceiptError> {
            guard let productId else {
                return .notChecked("not checked (no product id given)")
            }
            let purchases = claims.receipt.inAppPurchases
            guard let transactionId else {
                guard purchases.contains(where: { $0.productId == productId }) else {
                    return .fails(
                        ReceiptError(.productNotFound, field: ReceiptField.productId.label, reason: "the receipt does not contain product \(productId)"),
                        detail: "\(productId) not in the receipt")
                }
                return .holds(productId)
            }
            guard let entry = purchases.first(where: { $0.transactionId == transactionId }) else {
                return .notChecked("not checked (transaction \(transactionId) is not in the receipt)")
            }
            guard entry.productId == productId else {
                return .fails(
                    ReceiptError(.productNotFound, field: ReceiptField.productId.label, reason: "transaction \(transactionId) is for \(entry.productId), not \(productId)"),
                    detail: entry.productId)
            }
            return .holds(entry.productId)
        }
    }
}
