public import Foundation
public import Logging
import CoreMetrics
import StoreGateCore
public import StoreGateLedger
public import StoreGateWorkers

/// Announces entitlement changes: follows the event stream, and for every account its events
/// touched (and every account whose entitlements end by time now) derives the catalog's
/// entitlements, compares them with what it last announced, and appends an
/// `entitlement.changed` event per entitlement that flipped or whose end moved — with the
/// snapshot and its place in one ledger transaction, fenced by its lease, so each change is
/// announced once however many instances run it (``Ledger/commitEntitlementChanges(_:holder:now:lease:)``).
///
/// A backend can subscribe to `entitlement.changed` alone: replaying them gives each account's
/// entitlements. They follow the facts that caused them by at most a poll interval.
public struct EntitlementTracker: PeriodicWorker {
    /// Its place in the stream among the ledger's leased states.
    public static let stateName = "events/entitlement-tracker"
    static let place = LeasedValue<Int64>(stateName)

    let ledger: any Ledger
    let catalog: @Sendable () -> ProductCatalog
    let holder: String
    let lease: Duration
    let batch: Int
    let logger: Logger
    let now: @Sendable () -> Date
    public let schedule: WorkerSchedule
    private let announced = Counter(label: "storegate_events_entitlement_changes_total")

    public var workerName: String { "entitlement_tracker" }

    /// - Parameters:
    ///   - ledger: The ledger whose stream it follows and appends to.
    ///   - catalog: The catalog now (reloads apply at the next round).
    ///   - holder: This instance's name in leases.
    ///   - pollInterval: The wait when nothing new happened.
    ///   - lease: How long a killed instance holds the tracker.
    ///   - batch: Events (and due accounts) per round.
    ///   - now: The clock.
    public init(
        ledger: any Ledger, catalog: @escaping @Sendable () -> ProductCatalog, holder: String, pollInterval: Duration = .seconds(1),
        lease: Duration = .seconds(60), batch: Int = 500, logger: Logger, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.ledger = ledger
        self.catalog = catalog
        self.holder = holder
        self.lease = lease
        self.batch = batch
        self.logger = logger
        self.now = now
        self.schedule = WorkerSchedule(interval: pollInterval, backoff: Backoff(first: .seconds(1), maximum: .seconds(30)))
    }

    /// Sets its place at the end of the stream when it has none (a new deployment), before
    /// the service takes its first request: every change from then on is announced.
    public func initializePlace() async throws(LedgerError) {
        guard let leased = try await ledger.acquireLease(on: Self.place, holder: holder, now: now(), lease: lease) else { return }
        if try leased.get() == nil {
            _ = try await ledger.save(Self.place, try await ledger.lastEventSequence(), holder: holder, now: now(), lease: lease)
        }
        try await ledger.releaseLease(on: Self.stateName, holder: holder)
    }

    public func round() async throws -> WorkerPace {
        try await track() ? .again : .idle
    }

    public func stop() async {
        do throws(LedgerError) {
            try await ledger.releaseLease(on: Self.stateName, holder: holder)
        } catch {
            logger.debug("entitlement tracker: the lease could not be released", metadata: ["error": "\(error.code)"])
        }
    }

    /// One round: the accounts touched since its place and those due by time.
    ///
    /// - Returns: Whether it moved (more may wait).
    @discardableResult
    public func track() async throws(LedgerError) -> Bool {
        guard let leased = try await ledger.acquireLease(on: Self.place, holder: holder, now: now(), lease: lease) else { return false }
        guard let place = try leased.get() else {
            _ = try await ledger.save(Self.place, try await ledger.lastEventSequence(), holder: holder, now: now(), lease: lease)
            return true
        }
        let date = now()
        var events: [LedgerEvent]
        var newPlace = place
        do {
            events = try await ledger.events(after: place, limit: batch)
        } catch where error.code == .cursorExpired {
            logger.warning("entitlement tracker: events past its place were deleted by retention; continuing from the oldest kept", metadata: ["place": "\(place)"])
            events = []
            newPlace = 0
        }
        if let last = events.last { newPlace = last.sequence }
        // The accounts to look at, with what caused the look (the latest fact's source).
        var causes: [AccountID: String] = [:]
        for event in events where event.type != .entitlementChanged && event.type != .proofRefused {
            causes[event.account] = event.source
        }
        let catalog = catalog()
        if !catalog.entitlements.isEmpty {
            for account in try await ledger.accountsWithEntitlementsDue(at: date, limit: batch) where causes[account] == nil {
                causes[account] = LedgerEvent.timeSource
            }
        } else {
            causes = [:]
        }
        guard newPlace != place || !causes.isEmpty else { return false }
        let before = try await ledger.entitlementSnapshots(for: Array(causes.keys))
        var snapshots: [AccountID: EntitlementSnapshot] = [:]
        var changes: [LedgerEvent] = []
        for (account, source) in causes.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let grants = try await ledger.grants(for: account)
            let holdings = try await ledger.entitlements(for: account, at: date)
            let resolved = EntitlementResolver.resolve(holdings, catalog: catalog, grants: grants, at: date)
            let (snapshot, events) = EntitlementChanges.derive(account: account, before: before[account], resolved: resolved, at: date, source: source)
            if snapshot != before[account] { snapshots[account] = snapshot }
            changes += events
        }
        let committed = try await ledger.commitEntitlementChanges(
            EntitlementChangeBatch(snapshots: snapshots, events: changes, placeName: Self.stateName, placeValue: try Self.place.encode(newPlace)),
            holder: holder, now: date, lease: lease
        )
        guard committed else { return false }
        if !changes.isEmpty {
            announced.increment(by: changes.count)
            logger.debug("entitlement changes announced", metadata: ["events": "\(changes.count)", "accounts": "\(causes.count)"])
        }
        return true
    }
}
