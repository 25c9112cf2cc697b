public import StoreGateCore

/// Everything the caller expects of a receipt, as one value that composes small checks.
///
/// Only ``bundleId`` is required. The environments default to production and the sandbox
/// (App Review buys in the sandbox); Xcode receipts need `AppStoreEnvironment.xcode` here *and*
/// their certificate as an opt-in anchor.
///
/// The fields make the built-in checks (``checks``), run in this order: ``Environment``,
/// ``BundleId``, ``AppVersion``, ``DeviceHash``, ``ReceiptExpiration``, ``Transaction``,
/// ``Product``; then the caller's own (``additional``, ``adding(_:)``), in the order added.
/// A check whose field is not set reports "not checked" and never fails.
public struct ReceiptExpectations: Sendable {
    /// The app the receipt must be for.
    public var bundleId: String
    /// The app version the receipt must name (CFBundleVersion on iOS), if checked.
    public var appVersion: String?
    /// The app versions accepted at all (a service's configuration); empty accepts any. A
    /// receipt must name one of them, and ``appVersion``, when set, must be one of them too.
    public var acceptedAppVersions: Set<String>
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
    /// The caller's own checks, run after the built-in ones in this order.
    public var additional: [any ReceiptExpectation]

    /// Creates expectations.
    ///
    /// - Parameters:
    ///   - bundleId: The app the receipt must be for.
    ///   - appVersion: The app version the receipt must name.
    ///   - acceptedAppVersions: The app versions accepted at all; empty accepts any.
    ///   - device: The device the receipt must have been issued to.
    ///   - environments: The environments accepted.
    ///   - rejectsExpiredReceipt: Whether a receipt whose expiration date passed is refused.
    ///   - productId: A product the receipt must contain.
    ///   - transactionId: A transaction the receipt must contain.
    ///   - additional: The caller's own checks, run after the built-in ones.
    public init(
        bundleId: String,
        appVersion: String? = nil,
        acceptedAppVersions: Set<String> = [],
        device: DeviceIdentifier? = nil,
        environments: Set<AppStoreEnvironment> = AppStoreEnvironment.defaultAccepted,
        rejectsExpiredReceipt: Bool = true,
        productId: String? = nil,
        transactionId: String? = nil,
        additional: [any ReceiptExpectation] = []
    ) {
        self.bundleId = bundleId
        self.appVersion = appVersion
        self.acceptedAppVersions = acceptedAppVersions
        self.device = device
        self.environments = environments
        self.rejectsExpiredReceipt = rejectsExpiredReceipt
        self.productId = productId
        self.transactionId = transactionId
        self.additional = additional
    }

    /// These expectations with one more check of the caller's, run after every other.
    ///
    /// - Parameter check: The check to add.
    /// - Returns: A copy with `check` appended to ``additional``.
    public func adding(_ check: some ReceiptExpectation) -> ReceiptExpectations {
        var copy = self
        copy.additional.append(check)
        return copy
    }

    /// Every check, in the order the verifier runs them: the built-in ones made from the
    /// fields, then ``additional``.
    public var checks: [any ReceiptExpectation] {
        var checks: [any ReceiptExpectation] = []
        forEachCheck { checks.append($0) }
        return checks
    }

    /// Calls `body` with every check in order (the one place that order is written).
    func forEachCheck(_ body: (any ReceiptExpectation) -> Void) {
        body(Environment(accepted: environments))
        body(BundleId(bundleId))
        body(AppVersion(appVersion, accepted: acceptedAppVersions))
        body(DeviceHash(device))
        body(ReceiptExpiration(isEnforced: rejectsExpiredReceipt))
        body(Transaction(transactionId))
        body(Product(productId, inTransaction: transactionId))
        for check in additional {
            body(check)
        }
    }

    /// Evaluates every check against `claims`.
    func evaluate(_ claims: ReceiptClaims) -> ExpectationOutcome<ReceiptError> {
        var outcome = ExpectationOutcome<ReceiptError>()
        forEachCheck { check in
            outcome.record(check.name, check.evaluate(claims))
        }
        return outcome
    }
}
