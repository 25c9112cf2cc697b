public import Foundation
public import StoreGateAppStoreClient
public import StoreGateLedger
public import StoreGateWorkers

/// Why a sync run, an account refresh or another job of the App Store sync failed.
///
/// Shaped like the other modules' errors: equal by ``code``; ``reason`` is for people and never
/// compared. Codes are stable snake-case values, the same in `GET /v1/sync/status`, the
/// console, the logs and the HTTP replies of the refresh endpoint.
public struct SyncError: Error, Sendable, Hashable, CustomStringConvertible, WorkerRetryHint {
    /// The machine-readable failure.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// Too soon after the last refresh of this account.
        public static let rateLimited = Code(rawValue: "rate_limited")
        /// Apple failed, timed out or answered 429.
        public static let appleUnavailable = Code(rawValue: "apple_unavailable")
        /// An answer did not verify (signature, chain, app, environment): nothing of it was recorded.
        public static let rejected = Code(rawValue: "apple_answer_rejected")
        /// The ledger failed.
        public static let ledger = Code(rawValue: "ledger_unavailable")
        /// Another instance took the job's lease over mid-run.
        public static let leaseLost = Code(rawValue: "lease_lost")
        /// A consumption refund policy (`STOREGATE_CONSUMPTION_REFUND_POLICY`) does not parse.
        public static let invalidRefundPolicy = Code(rawValue: "invalid_refund_policy")

        /// Apple answered with one of its error codes: `apple_<number>`.
        public static func apple(_ code: AppStoreAPIErrorCode) -> Code {
            Code(rawValue: "apple_\(code.rawValue)")
        }

        /// The App Store client failed without an Apple error code: its own code
        /// (`timed_out`, `signed_payload_rejected`, …).
        public static func client(_ code: AppStoreClientError.Code) -> Code {
            Code(rawValue: code.description)
        }

        /// The ledger failed with `code`: `ledger_<code>`.
        public static func ledgerFailure(_ code: LedgerError.Code) -> Code {
            Code(rawValue: "ledger_\(code)")
        }
    }

    /// What failed.
    public let code: Code
    /// Why, for logs and replies; never a signed payload or a secret.
    public let reason: String
    /// When to try again, if Apple said.
    public let retryAfter: Date?

    /// Creates an error.
    public init(_ code: Code, _ reason: String, retryAfter: Date? = nil) {
        self.code = code
        self.reason = reason
        self.retryAfter = retryAfter
    }

    /// The failure of a call to Apple: Apple's error code when it gave one, else the client's.
    public init(_ error: AppStoreClientError) {
        self.init(error.apiError.map(Code.apple) ?? .client(error.code), "\(error.code): \(error.reason)", retryAfter: error.retryAfter)
    }

    /// The failure of the ledger.
    public init(_ error: LedgerError) {
        self.init(.ledgerFailure(error.code), "ledger: \(error.code): \(error.reason)")
    }

    public var description: String { "\(code.rawValue): \(reason)" }

    public static func == (lhs: SyncError, rhs: SyncError) -> Bool { lhs.code == rhs.code }

    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

/// The refresh endpoint's name for ``SyncError``.
public typealias AccountRefreshError = SyncError
