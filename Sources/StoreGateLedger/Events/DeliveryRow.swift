package import Foundation

/// A delivery as the stores keep it: the public record and its lease.
package struct DeliveryRow: Sendable, Hashable {
    package var delivery: EventDelivery
    package var claimedBy: String?
    package var claimedUntil: Date?

    package init(delivery: EventDelivery, claimedBy: String? = nil, claimedUntil: Date? = nil) {
        self.delivery = delivery
        self.claimedBy = claimedBy
        self.claimedUntil = claimedUntil
    }
}

extension EventDelivery {
    /// The state after an attempt's `result`.
    package mutating func apply(_ result: DeliveryResult, at date: Date) {
        let date = date.ledgerNormalized
        attempts += 1
        if firstAttemptAt == nil { firstAttemptAt = date }
        switch result {
        case .delivered(let status):
            self.status = .delivered
            lastStatus = status
            lastError = nil
            deliveredAt = date
            nextAttemptAt = nil
        case .retry(let next, let status, let error):
            lastStatus = status
            lastError = error
            nextAttemptAt = next.ledgerNormalized
        case .failed(let status, let error):
            self.status = .failed
            lastStatus = status
            lastError = error
            nextAttemptAt = nil
        case .held(let next, let status, let error):
            firstAttemptAt = nil
            lastStatus = status
            lastError = error
            nextAttemptAt = next.ledgerNormalized
        }
    }

    /// A new pending delivery of `event`.
    package init(endpoint: String, event: LedgerEvent, now: Date) {
        self.init(
            endpoint: endpoint, sequence: event.sequence, eventId: event.id, eventType: event.type.rawValue,
            account: event.account, status: .pending, attempts: 0, firstAttemptAt: nil, nextAttemptAt: now.ledgerNormalized,
            lastStatus: nil, lastError: nil, deliveredAt: nil
        )
    }
}

extension LedgerPlanner {
    /// Validates a delivery call's endpoint name and page.
    package static func checkDeliveryArguments(endpoint: String?, limit: Int) throws(LedgerError) {
        if let endpoint {
            guard (1...64).contains(endpoint.utf8.count) else {
                throw LedgerError(.invalidArgument, reason: "an endpoint name has 1...64 UTF-8 bytes")
            }
        }
        guard (1...maximumEventPage).contains(limit) else {
            throw LedgerError(.invalidArgument, reason: "a deliveries page holds 1...\(maximumEventPage), got \(limit)")
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    package var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
