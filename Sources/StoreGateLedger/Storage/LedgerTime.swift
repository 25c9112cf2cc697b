public import Foundation

extension Date {
    /// Milliseconds since 1970, the precision of Apple's dates and of every ledger column.
    package var ledgerMilliseconds: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded())
    }

    /// The date of a stored millisecond timestamp.
    package init(ledgerMilliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(ledgerMilliseconds) / 1000)
    }

    /// This date truncated to the ledger's precision, so every backend answers identically.
    package var ledgerNormalized: Date {
        Date(ledgerMilliseconds: ledgerMilliseconds)
    }
}
