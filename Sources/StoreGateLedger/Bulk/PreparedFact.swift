package import Foundation

/// A ``LedgerFact`` prepared outside the write transaction, as the normal path prepares its
/// call before it writes: validated, normalized and sealed, or failed.
package enum PreparedFact: Sendable {
    case proof(PreparedProof, receivedAt: Date)
    case notification(PreparedNotification, receivedAt: Date)
    case failed(LedgerError)
}

extension LedgerPlanner {
    /// Prepares each fact as its normal call would (``prepare(_:for:receivedAt:)``,
    /// ``prepare(_:receivedAt:)``); a fact that does not prepare fails alone.
    package func prepare(_ facts: [LedgerFact]) -> [PreparedFact] {
        facts.map { fact in
            do throws(LedgerError) {
                switch fact {
                case .record(let proof, let account, let date):
                    return .proof(try prepare(proof, for: account, receivedAt: date), receivedAt: date)
                case .notification(let notification, let date):
                    return .notification(try prepare(notification, receivedAt: date), receivedAt: date)
                }
            } catch {
                return .failed(error)
            }
        }
    }
}
