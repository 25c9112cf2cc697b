public import Foundation
public import StoreGateCore

/// One fact for ``BulkRecording/recordInBulk(_:)``: what one ``Ledger/record(_:for:)`` or
/// ``Ledger/apply(_:)`` call would be told, with the time the ledger's clock would have read
/// when the call arrived (the normal path reads ``LedgerConfiguration/now``; a bulk import or
/// a benchmark building years of history gives each fact its own).
public enum LedgerFact: Sendable {
    /// A verified proof redeemed by an account, as ``Ledger/record(_:for:)``.
    case record(VerifiedProof, for: AccountID, receivedAt: Date)
    /// A verified App Store Server Notification, as ``Ledger/apply(_:)``.
    case notification(VerifiedNotification, receivedAt: Date)

    /// When the ledger received the fact.
    public var receivedAt: Date {
        switch self {
        case .record(_, _, let date), .notification(_, let date): date
        }
    }
}
