public import Foundation
import StoreGateLedger
import StoreGateWorkers

/// A worker's place in the ledger's outbox, kept as a leased state: one instance follows the
/// stream at a time, and a restarted one continues where it stopped. What
/// ``FirstSightRefresh`` and ``TransactionActions`` share.
///
/// `Place` is what the worker saves: at least the sequence of the last event it handled.
struct OutboxPlace<Place: Codable & Sendable>: Sendable {
    let state: LeasedValue<Place>
    let ledger: any Ledger
    let holder: String
    let lease: Duration
    let now: @Sendable () -> Date
    /// A place at the end of the stream.
    let start: @Sendable (Int64) -> Place

    /// What ``acquire()`` found.
    enum Acquired {
        /// This instance holds the place.
        case held(Place)
        /// There was no place yet: one was set at the end of the stream (a new deployment does
        /// not replay history), nothing to handle in this round.
        case started
        /// Another instance holds it.
        case notHolder
    }

    /// Takes (or renews) the lease on the place.
    func acquire() async throws(LedgerError) -> Acquired {
        guard let leased = try await ledger.acquireLease(on: state, holder: holder, now: now(), lease: lease) else { return .notHolder }
        if let place = try leased.get() { return .held(place) }
        return try await save(start(try await ledger.lastEventSequence())) ? .started : .notHolder
    }

    /// Sets the place at the end of the stream when it has none yet; nothing when it has one or
    /// another instance holds it. Run it before the service accepts its first request, so every
    /// event from then on is after the place, however late the worker's first round comes.
    func initialize() async throws(LedgerError) {
        guard let leased = try await ledger.acquireLease(on: state, holder: holder, now: now(), lease: lease) else { return }
        if try leased.get() == nil {
            _ = try await save(start(try await ledger.lastEventSequence()))
        }
        try await ledger.releaseLease(on: state.name, holder: holder)
    }

    /// Saves the place, fenced by the lease; `false` when another instance took it over.
    func save(_ place: Place) async throws(LedgerError) -> Bool {
        try await ledger.save(state, place, holder: holder, now: now(), lease: lease)
    }

    /// Lets another instance take over at once (at shutdown); the lease would run out anyway.
    func release() async throws(LedgerError) {
        try await ledger.releaseLease(on: state.name, holder: holder)
    }

    /// The events after `sequence`, at most `limit`; `nil` when retention deleted events past
    /// it (the caller goes on from the oldest kept).
    func events(after sequence: Int64, limit: Int = 100) async throws(LedgerError) -> [LedgerEvent]? {
        do {
            return try await ledger.events(after: sequence, limit: limit)
        } catch where error.code == .cursorExpired {
            return nil
        }
    }
}

/// What one step of an outbox follower (``FirstSightRefresh``, ``TransactionActions``) did.
public enum OutboxStep: Sendable, Hashable {
    /// Events were handled (or skipped) and the place moved.
    case progressed
    /// Nothing new in the outbox.
    case idle
    /// Another instance follows the stream.
    case notHolder
    /// Apple (or the ledger) is unavailable until then; the same event is tried again.
    case waitUntil(Date)

    /// When the worker's next round comes: at once after progress, at the date asked (at least
    /// 50 ms away), or the worker's interval.
    func pace(now: Date) -> WorkerPace {
        switch self {
        case .waitUntil(let date):
            let seconds = max(0.05, date.timeIntervalSince(now))
            return .after(.milliseconds(Int64((seconds * 1000).rounded(.up))))
        case .idle, .notHolder:
            return .idle
        case .progressed:
            return .again
        }
    }
}
