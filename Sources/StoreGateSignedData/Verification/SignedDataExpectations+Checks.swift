public import Foundation
public import StoreGateCore

/// The built-in checks ``SignedDataExpectations`` makes from its fields, each a small value
/// named as reports name it. Each reads the claims' kind and decides what applies to it.
extension SignedDataExpectations {
    /// `bundle_id`: the payload names this bundle id (compared exactly). A renewal info names
    /// none and is not checked.
    public struct BundleId: SignedDataExpectation, Hashable {
        /// The app's bundle identifier.
        public let bundleId: String

        /// `bundle_id`.
        public var name: String { "bundle_id" }

        /// - Parameter bundleId: The app's bundle identifier.
        public init(_ bundleId: String) {
            self.bundleId = bundleId
        }

        /// Fails with ``SignedDataError/Code/bundleIdMismatch`` when the payload names another
        /// bundle id or none.
        public func evaluate(_ claims: SignedDataClaims) -> ExpectationResult<SignedDataError> {
            guard claims.kind != .signedRenewalInfo else {
                return .notChecked("not checked (a renewal info names no bundle id)")
            }
            guard let found = claims.bundleId else {
                return .fails(
                    SignedDataError(.bundleIdMismatch, field: claims.fields.bundleId, reason: "the payload names no bundle id"),
                    detail: "(none)")
            }
            guard found == bundleId else {
                return .fails(
                    SignedDataError(.bundleIdMismatch, field: claims.fields.bundleId, reason: "signed for bundle \(found), not \(bundleId)"),
                    detail: found)
            }
            return .holds(found)
        }
    }

    /// `environment`: the environment StoreGate reports is one of the accepted ones.
    public struct Environment: SignedDataExpectation, Hashable {
        /// The environments accepted.
        public let accepted: Set<AppStoreEnvironment>

        /// `environment`.
        public var name: String { "environment" }

        /// - Parameter accepted: The environments accepted.
        public init(accepted: Set<AppStoreEnvironment>) {
            self.accepted = accepted
        }

        /// Fails with ``SignedDataError/Code/environmentNotAccepted`` when the reported
        /// environment is not accepted, or the payload names none.
        public func evaluate(_ claims: SignedDataClaims) -> ExpectationResult<SignedDataError> {
            guard let claimed = claims.claimedEnvironment, let reported = claims.environment else {
                return .fails(
                    SignedDataError(.environmentNotAccepted, field: claims.fields.environment, reason: "the payload names no environment"),
                    detail: "(none)")
            }
            let shown = reported == claimed ? reported.rawValue : "\(reported.rawValue) (claims \(claimed.rawValue))"
            guard accepted.contains(reported) else {
                let list = accepted.map(\.rawValue).sorted().joined(separator: ", ")
                return .fails(
                    SignedDataError(.environmentNotAccepted, field: claims.fields.environment, reason: "environment \(shown) is not accepted (\(list))"),
                    detail: "\(shown) (accepted: \(list))")
            }
            return .holds(shown)
        }
    }

    /// `app_apple_id`: a notification or app transaction names the expected `appAppleId`.
    ///
    /// One that claims `Production` must name it, and the expectations must name one
    /// (Apple's rule: production data names the app by its App Store identifier). The claim
    /// decides, not the reported environment: it is signed, and checking it keeps the rule
    /// testable with test anchors (whose data StoreGate reports as `Test`). Elsewhere, when
    /// both sides name one they must agree. Transactions and renewal infos name none and are
    /// not checked.
    public struct AppAppleId: SignedDataExpectation, Hashable {
        /// The app's App Store identifier, if known.
        public let appAppleId: Int64?

        /// `app_apple_id`.
        public var name: String { "app_apple_id" }

        /// - Parameter appAppleId: The app's App Store identifier, if known.
        public init(_ appAppleId: Int64?) {
            self.appAppleId = appAppleId
        }

        /// Fails with ``SignedDataError/Code/appAppleIdRequired`` (production data, no
        /// identifier expected) or ``SignedDataError/Code/appAppleIdMismatch``.
        public func evaluate(_ claims: SignedDataClaims) -> ExpectationResult<SignedDataError> {
            guard claims.kind == .notification || claims.kind == .appTransaction else {
                return .notChecked("not checked (only notifications and app transactions name one)")
            }
            let field = claims.fields.appAppleId
            let found = claims.appAppleId
            if claims.claimedEnvironment == .production {
                guard let expected = appAppleId else {
                    return .fails(
                        SignedDataError(.appAppleIdRequired, field: field, reason: "production data names the app by appAppleId; the expectations name none"),
                        detail: found.map(String.init) ?? "(none)")
                }
                guard let found, found == expected else {
                    return .fails(
                        SignedDataError(.appAppleIdMismatch, field: field, reason: "signed for app \(found.map(String.init) ?? "(none)"), not \(expected)"),
                        detail: found.map(String.init) ?? "(none)")
                }
                return .holds(String(found))
            }
            guard let expected = appAppleId else {
                return .notChecked("not checked (no appAppleId given)")
            }
            guard let found else {
                return .notChecked("not checked (the payload names none outside Production)")
            }
            guard found == expected else {
                return .fails(
                    SignedDataError(.appAppleIdMismatch, field: field, reason: "signed for app \(found), not \(expected)"),
                    detail: String(found))
            }
            return .holds(String(found))
        }
    }

    /// `max_age`: the payload was signed at most this many seconds ago by the verifier's clock.
    public struct MaxAge: SignedDataExpectation, Hashable {
        /// The oldest `signedDate` accepted, as an age in seconds; `nil` accepts any age.
        public let seconds: TimeInterval?

        /// `max_age`.
        public var name: String { "max_age" }

        /// - Parameter seconds: The oldest `signedDate` accepted, as an age in seconds.
        public init(_ seconds: TimeInterval?) {
            self.seconds = seconds
        }

        /// Fails with ``SignedDataError/Code/signedDateMissing`` when nothing in the payload
        /// dates it, or ``SignedDataError/Code/signedDateTooOld``.
        public func evaluate(_ claims: SignedDataClaims) -> ExpectationResult<SignedDataError> {
            guard let seconds else {
                return .notChecked("not checked (no maximum age given)")
            }
            guard let signedDate = claims.signedDate else {
                return .fails(
                    SignedDataError(.signedDateMissing, field: "signedDate", reason: "a maximum age is set but the payload has no signedDate"),
                    detail: "no signedDate")
            }
            let age = claims.now.timeIntervalSince(signedDate)
            guard age <= seconds else {
                return .fails(
                    SignedDataError(.signedDateTooOld, field: "signedDate",
                        reason: "signed \(Self.whole(age)) s ago; the maximum age is \(Self.whole(seconds)) s"),
                    detail: "signed \(Self.whole(age)) s ago")
            }
            return .holds("signed \(Self.whole(age)) s ago")
        }

        /// Seconds as a whole number when they are one (never traps on a huge or NaN value).
        private static func whole(_ seconds: TimeInterval) -> String {
            guard let whole = Int(exactly: seconds.rounded(.towardZero)) else { return "\(seconds)" }
            return String(whole)
        }
    }

    /// `nested_data`: a notification's nested signed data is for the notification's app and
    /// environment (a notification relaying another app's transaction is refused). Always
    /// part of the expectations; not checked for other kinds or without nested data.
    public struct NestedData: SignedDataExpectation, Hashable {
        /// `nested_data`.
        public var name: String { "nested_data" }

        /// Creates the check.
        public init() {}

        /// Fails with ``SignedDataError/Code/nestedMismatch`` when nested data names another
        /// bundle id or environment than the notification.
        public func evaluate(_ claims: SignedDataClaims) -> ExpectationResult<SignedDataError> {
            guard !claims.nested.isEmpty else {
                return .notChecked("not checked (no nested signed data)")
            }
            guard let claimed = claims.claimedEnvironment, let reported = claims.environment else {
                return .notChecked("not checked (the notification names no environment)")
            }
            for nested in claims.nested {
                if nested.kind != .signedRenewalInfo, nested.bundleId != claims.bundleId {
                    let what = nested.kind == .appTransaction ? "app transaction" : "transaction"
                    return .fails(
                        SignedDataError(.nestedMismatch, field: nested.member + ".bundleId",
                            reason: "the nested \(what) is for bundle \(nested.bundleId ?? "(none)"), the notification for \(claims.bundleId ?? "(none)")"),
                        detail: "\(nested.member) names bundle \(nested.bundleId ?? "(none)")")
                }
                guard nested.claimedEnvironment == claimed, nested.environment == reported else {
                    return .fails(
                        SignedDataError(.nestedMismatch, field: nested.environmentField,
                            reason: "nested data is from \(nested.environment.rawValue), the notification from \(reported.rawValue)"),
                        detail: "\(nested.member) is from \(nested.environment.rawValue)")
                }
            }
            return .holds("nested data of the same app and environment")
        }
    }

    /// `product`: the proof is for this product.
    public struct Product: SignedDataExpectation, Hashable {
        /// The product the proof must be for; `nil` checks nothing.
        public let productId: String?

        /// `product`.
        public var name: String { "product" }

        /// - Parameter productId: The product the proof must be for, if checked.
        public init(_ productId: String?) {
            self.productId = productId
        }

        /// Fails with ``SignedDataError/Code/productMismatch`` when the proof names other
        /// products or none (an app transaction).
        public func evaluate(_ claims: SignedDataClaims) -> ExpectationResult<SignedDataError> {
            guard let productId else {
                return .notChecked("not checked (no product id given)")
            }
            guard claims.productIds.contains(productId) else {
                let named = claims.productIds.joined(separator: " / ")
                return .fails(
                    SignedDataError(.productMismatch, field: claims.fields.productId,
                        reason: named.isEmpty ? "the proof names no product; expected \(productId)" : "for product \(named), not \(productId)"),
                    detail: named.isEmpty ? "(none)" : named)
            }
            return .holds(productId)
        }
    }

    /// `transaction`: the proof is this transaction.
    public struct Transaction: SignedDataExpectation, Hashable {
        /// The transaction the proof must be; `nil` checks nothing.
        public let transactionId: String?

        /// `transaction`.
        public var name: String { "transaction" }

        /// - Parameter transactionId: The transaction the proof must be, if checked.
        public init(_ transactionId: String?) {
            self.transactionId = transactionId
        }

        /// Fails with ``SignedDataError/Code/transactionMismatch`` when the proof is another
        /// transaction or none (a renewal info, an app transaction).
        public func evaluate(_ claims: SignedDataClaims) -> ExpectationResult<SignedDataError> {
            guard let transactionId else {
                return .notChecked("not checked (no transaction id given)")
            }
            guard claims.transactionId == transactionId else {
                let found = claims.transactionId
                return .fails(
                    SignedDataError(.transactionMismatch, field: claims.fields.transactionId,
                        reason: found.map { "transaction \($0), not \(transactionId)" } ?? "the proof is no transaction; expected \(transactionId)"),
                    detail: found ?? "(none)")
            }
            return .holds(transactionId)
        }
    }
}
