public import Foundation
import Synchronization

/// Where every background worker of a process stands, for the readiness report.
///
/// ``PeriodicService`` reports each round here. A worker that has not completed a round for
/// longer than its schedule's ``WorkerSchedule/stallAfter`` since it started (or since its
/// last completed round) is ``WorkerStatus/Health-swift.enum/stalled``: failing rounds (the
/// database or Apple down) or a round that never ends.
public final class WorkerRegistry: Sendable {
    private let workers = Mutex<[String: WorkerStatus]>([:])

    /// An empty registry.
    public init() {}

    /// Registers a worker that is waiting at the start gate.
    func waiting(_ name: String, schedule: WorkerSchedule) {
        workers.withLock { $0[name] = WorkerStatus(name: name, stallAfter: schedule.stallAfter) }
    }

    /// The worker passed the start gate at `date`.
    func started(_ name: String, at date: Date) {
        workers.withLock { $0[name]?.startedAt = date }
    }

    /// A round completed at `date`.
    func succeeded(_ name: String, at date: Date) {
        workers.withLock { workers in
            workers[name]?.lastSuccessAt = date
            workers[name]?.rounds += 1
            workers[name]?.consecutiveFailures = 0
        }
    }

    /// A round failed at `date` with `error` (a code and reason, never a secret).
    func failed(_ name: String, at date: Date, error: String) {
        workers.withLock { workers in
            workers[name]?.rounds += 1
            workers[name]?.failures += 1
            workers[name]?.consecutiveFailures += 1
            workers[name]?.lastFailureAt = date
            workers[name]?.lastError = error
        }
    }

    /// Forgets a worker that was stopped for good (a removed webhook endpoint's), so that
    /// readiness no longer reports it.
    public func forget(_ name: String) {
        workers.withLock { $0[name] = nil }
    }

    /// Every worker's status at `date`, by name.
    public func statuses(at date: Date) -> [WorkerStatus] {
        workers.withLock { Array($0.values) }.map { $0.evaluated(at: date) }.sorted { $0.name < $1.name }
    }
}

/// One background worker's state, as the readiness report shows it.
public struct WorkerStatus: Sendable, Hashable {
    /// Where the worker stands.
    public enum Health: String, Sendable, Hashable, CaseIterable {
        /// Waiting at the start gate (the ledger is being migrated).
        case waiting
        /// Its last round completed within its stall limit (or it started recently).
        case ok
        /// No round completed within its stall limit.
        case stalled
    }

    /// The worker's name.
    public let name: String
    /// How long it may go without a completed round.
    public let stallAfter: Duration
    /// When it passed the start gate.
    public internal(set) var startedAt: Date?
    /// When its last round completed.
    public internal(set) var lastSuccessAt: Date?
    /// When its last round failed.
    public internal(set) var lastFailureAt: Date?
    /// Why its last failed round failed.
    public internal(set) var lastError: String?
    /// Rounds run.
    public internal(set) var rounds = 0
    /// Rounds failed.
    public internal(set) var failures = 0
    /// Rounds failed since the last completed one.
    public internal(set) var consecutiveFailures = 0
    /// Its health at the date it was read.
    public internal(set) var health: Health = .waiting

    init(name: String, stallAfter: Duration) {
        self.name = name
        self.stallAfter = stallAfter
    }

    /// Seconds since the last completed round (or since it started, before the first).
    public func lag(at date: Date) -> TimeInterval? {
        (lastSuccessAt ?? startedAt).map { max(0, date.timeIntervalSince($0)) }
    }

    func evaluated(at date: Date) -> WorkerStatus {
        var status = self
        if let lag = lag(at: date) {
            let limit = Double(stallAfter.components.seconds) + Double(stallAfter.components.attoseconds) / 1e18
            status.health = lag > limit ? .stalled : .ok
        } else {
            status.health = .waiting
        }
        return status
    }
}
