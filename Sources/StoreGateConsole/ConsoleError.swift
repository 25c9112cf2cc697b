public import HTTPTypes
public import StoreGateLedger

/// A console request the console does not answer with a page of its own: the service answers
/// it in its error shape (the code tells which reply).
///
/// Equal by code.
public struct ConsoleError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed.
    public enum Code: String, Sendable, Hashable {
        /// A form larger than the console reads.
        case formTooLarge
        /// A path parameter that is not valid percent-encoded text.
        case invalidPathParameter
        /// The ledger failed a read a form needed (``ConsoleError/ledgerError``).
        case ledgerFailed
        /// The service's address policy refused a webhook URL (shown on a page).
        case webhookAddressRefused
    }

    /// What failed.
    public let code: Code
    /// The status the reply carries.
    public let status: HTTPResponse.Status
    /// The form field or path parameter concerned, if any.
    public let field: String?
    /// Why, for people.
    public let reason: String
    /// The ledger's error, for ``Code/ledgerFailed``.
    public let ledgerError: LedgerError?

    /// An error from its parts.
    ///
    /// - Parameters:
    ///   - code: What failed.
    ///   - status: The reply's status.
    ///   - field: The field concerned.
    ///   - reason: Why.
    ///   - ledgerError: The ledger's error, if it failed.
    public init(_ code: Code, status: HTTPResponse.Status, field: String? = nil, reason: String, ledgerError: LedgerError? = nil) {
        self.code = code
        self.status = status
        self.field = field
        self.reason = reason
        self.ledgerError = ledgerError
    }

    /// `code: reason`.
    public var description: String { "\(code.rawValue): \(reason)" }

    public static func == (lhs: ConsoleError, rhs: ConsoleError) -> Bool { lhs.code == rhs.code }

    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
