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
    let roundTime: Duration
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
    ///   - roundTime: How long a round resolves accounts before it commits what it has (at
    ///     least one account). A catch-up after downtime — thousands of accounts waiting, their
    ///     rows perhaps not in memory — then writes in steps of about this long, instead of one
    ///     write of 500 accounts' snapshots and events that every other write waits behind (on
    ///     SQLite, one writer; measured on a cold 10^7 ledger: a consume waited 24 s).
    ///   - now: The clock.
    public init(
        ledger: any Ledger, catalog: @escaping @Sendable () -> ProductCatalog, holder: String, pollInterval: Duration = .seconds(1),
        lease: Duration = .seconds(60), batch: Int = 500, roundTime: Duration = .milliseconds(500), logger: Logger,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.ledger = ledger
        self.catalog = catalog
        self.holder = holder
        self.lease = lease
        self.batch = batch
        self.roundTime = roundTime
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
        // The accounts to look at, in the order the events first name them (then those due by
        // time), with what caused the look (the latest fact's source).
        var causes: [AccountID: String] = [:]
        var order: [AccountID] = []
        var firstEvent: [AccountID: Int] = [:]
        for (index, event) in events.enumerated() where event.type != .entitlementChanged && event.type != .proofRefused {
            if causes[event.account] == nil {
                order.append(event.account)
                firstEvent[event.account] = index
            }
            causes[event.account] = event.source
        }
        let catalog = catalog()
        if !catalog.entitlements.isEmpty {
            for account in try await ledger.accountsWithEntitlementsDue(at: date, limit: batch) where causes[account] == nil {
                causes[account] = LedgerEvent.timeSource
                order.append(account)
            }
        } else {
            causes = [:]
            order = []
        }
        guard newPlace != place || !causes.isEmpty else { return false }
        let before = try await ledger.entitlementSnapshots(for: order)
        var snapshots: [AccountID: EntitlementSnapshot] = [:]
        var changed: [AccountID: [LedgerEvent]] = [:]
        let clock = ContinuousClock()
        let started = clock.now
        var resolvedCount = 0
        for account in order {
            // At least one account a round, so a catch-up always moves.
            if resolvedCount > 0, clock.now - started >= roundTime { break }
            let source = causes[account] ?? LedgerEvent.timeSource
            let grants = try await ledger.grants(for: account)
            let holdings = try await ledger.entitlements(for: account, at: date)
            let resolved = EntitlementResolver.resolve(holdings, catalog: catalog, grants: grants, at: date)
            let (snapshot, events) = EntitlementChanges.derive(account: account, before: before[account], resolved: resolved, at: date, source: source)
            if snapshot != before[account] { snapshots[account] = snapshot }
            if !events.isEmpty { changed[account] = events }
            resolvedCount += 1
        }
        // Announced by account, whatever order they were looked at in.
        let changes = changed.sorted { $0.key.rawValue < $1.key.rawValue }.flatMap(\.value)
        if resolvedCount < order.count, let index = firstEvent[order[resolvedCount]] {
            // Out of time: the place moves only past the events before the first one naming an
            // account not looked at yet (every account they name was). The next round goes on
            // from there; accounts looked at again there find their snapshot current.
            newPlace = index > 0 ? events[index - 1].sequence : place
            logger.debug("entitlement tracker: the round's time ran out; the rest follows at once", metadata: [
                "accounts": "\(resolvedCount)", "waiting": "\(order.count - resolvedCount)",
            ])
        }
        let committed = try await ledger.commitEntitlementChanges(
            EntitlementChangeBatch(snapshots: snapshots, events: changes, placeName: Self.stateName, placeValue: try Self.place.encode(newPlace)),
            holder: holder, now: date, lease: lease
        )
        guard committed else { return false }
        if !changes.isEmpty {
            announced.increment(by: changes.count)
            logger.debug("entitlement changes announced", metadata: ["events": "\(changes.count)", "accounts": "\(resolvedCount)"])
        }
        return true
    }
}
