public import Foundation

/// One named piece of a background job's state (such as the App Store sync cursor of one app
/// and environment), with the lease that lets one instance at a time advance it.
public struct LeasedState: Sendable, Hashable {
    /// The state's name, such as `sync/notification-history/com.example.app/Production`.
    public let name: String
    /// The job's own encoding of its state (JSON); `nil` until the first save.
    public let value: String?
    /// Who holds (or last held) the lease.
    public let holder: String?
    /// When that lease runs out.
    public let leaseUntil: Date?
    /// When `value` was last saved.
    public let updatedAt: Date?

    /// Creates a value from its parts.
    public init(name: String, value: String?, holder: String?, leaseUntil: Date?, updatedAt: Date?) {
        self.name = name
        self.value = value
        self.holder = holder
        self.leaseUntil = leaseUntil
        self.updatedAt = updatedAt
    }

    /// Whether the lease is held by someone at `date`.
    public func isLeased(at date: Date) -> Bool {
        holder != nil && (leaseUntil.map { $0 > date } ?? false)
    }
}

/// Named states kept in the ledger's own database, each advanced by one holder at a time.
///
/// A background job that several instances run (the App Store sync) takes the lease on its
/// state with ``acquireLease(on:holder:now:lease:)``, works, and saves its progress with
/// ``saveLeasedState(_:value:holder:now:lease:)``, which also renews the lease. A save is
/// *fenced*: it is refused once another holder took the lease over (after this one's ran out,
/// say because its process was killed), so a stalled instance never overwrites newer progress.
/// Lease times are the callers' clocks; keep the lease well above the clock skew between
/// instances.
public protocol LeasedStateStore: Sendable {
    /// Takes the lease on `name` for `holder` until `now + lease`, when nobody holds it, the
    /// holder's lease ran out, or `holder` already holds it (a renewal).
    ///
    /// - Returns: The state when the lease is `holder`'s, `nil` when another holder has it.
    func acquireLease(on name: String, holder: String, now: Date, lease: Duration) async throws(LedgerError) -> LeasedState?

    /// Saves `value` and renews the lease until `now + lease`, if `holder` still holds it.
    ///
    /// - Returns: Whether it was saved (`false`: the lease was lost; stop working).
    func saveLeasedState(_ name: String, value: String, holder: String, now: Date, lease: Duration) async throws(LedgerError) -> Bool

    /// Ends `holder`'s lease on `name` now (a graceful stop), keeping the state.
    func releaseLease(on name: String, holder: String) async throws(LedgerError)

    /// Every state whose name starts with `prefix`, by name.
    func leasedStates(prefix: String) async throws(LedgerError) -> [LeasedState]

    /// Deletes the state `name` if `holder` holds its lease (a finished job's record that is
    /// no longer needed). Fenced like a save.
    ///
    /// - Returns: Whether it was deleted.
    func removeLeasedState(_ name: String, holder: String) async throws(LedgerError) -> Bool
}

extension LedgerPlanner {
    /// Validates a leased state's name and holder.
    package static func checkLeaseArguments(name: String, holder: String? = nil) throws(LedgerError) {
        guard !name.isEmpty, name.utf8.count <= 256 else {
            throw LedgerError(.invalidArgument, reason: "a leased state's name is 1...256 bytes")
        }
        if let holder, holder.isEmpty || holder.utf8.count > 256 {
            throw LedgerError(.invalidArgument, reason: "a lease holder is 1...256 bytes")
        }
    }
}
