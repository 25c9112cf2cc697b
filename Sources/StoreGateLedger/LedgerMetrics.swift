import CoreMetrics
import Foundation
import Metrics

/// The ledger's swift-metrics instruments, one set per backend (label `backend`).
///
/// Created when a ledger opens: bootstrap the `MetricsSystem` before opening one. Labels are
/// low-cardinality: backend, operation and outcome, never accounts or products.
///
/// - `storegate_ledger_records_total{backend,outcome}`: outcome `new`, `updated`, `duplicate`, `conflict`, `rejected`, `error`.
/// - `storegate_ledger_notifications_total{backend,outcome}`: `applied`, `duplicate`, `error`.
/// - `storegate_ledger_consumptions_total{backend,outcome}`: `consumed`, `replay`, `insufficient`, `rejected`, `error`.
/// - `storegate_ledger_operation_duration_seconds{backend,operation}`: `record`, `notification`, `query`, `consume`.
package struct LedgerMetrics: Sendable {
    package enum Operation: String, Sendable, CaseIterable {
        case record, notification, query, consume
    }

    private let records: [String: Counter]
    private let notifications: [String: Counter]
    private let consumptions: [String: Counter]
    private let timers: [Operation: CoreMetrics.Timer]

    package init(backend: String) {
        func counters(_ label: String, _ outcomes: [String]) -> [String: Counter] {
            Dictionary(uniqueKeysWithValues: outcomes.map {
                ($0, Counter(label: label, dimensions: [("backend", backend), ("outcome", $0)]))
            })
        }
        records = counters("storegate_ledger_records_total", ["new", "updated", "duplicate", "conflict", "rejected", "error"])
        notifications = counters("storegate_ledger_notifications_total", ["applied", "duplicate", "error"])
        consumptions = counters("storegate_ledger_consumptions_total", ["consumed", "replay", "insufficient", "rejected", "error"])
        timers = Dictionary(uniqueKeysWithValues: Operation.allCases.map {
            ($0, CoreMetrics.Timer(
                label: "storegate_ledger_operation_duration_seconds",
                dimensions: [("backend", backend), ("operation", $0.rawValue)],
                preferredDisplayUnit: .seconds
            ))
        })
    }

    /// Counts a recording by its outcome.
    package func recorded(_ outcome: RecordOutcome) {
        let key = !outcome.newTransactionIds.isEmpty ? "new" : (outcome.updatedTransactionIds.isEmpty ? "duplicate" : "updated")
        records[key]?.increment()
    }

    /// Counts a refused or failed recording.
    package func recordFailed(_ error: LedgerError) {
        switch error.code {
        case .ownedByAnotherAccount, .appAccountTokenMismatch: records["conflict"]?.increment()
        case .storage, .migration, .closed: records["error"]?.increment()
        default: records["rejected"]?.increment()
        }
    }

    /// Counts a notification by its outcome.
    package func notification(_ outcome: String) {
        notifications[outcome]?.increment()
    }

    /// Counts a consumption by its outcome.
    package func consumption(_ outcome: String) {
        consumptions[outcome]?.increment()
    }

    /// Counts a refused or failed consumption.
    package func consumptionFailed(_ error: LedgerError) {
        switch error.code {
        case .insufficientBalance: consumptions["insufficient"]?.increment()
        case .storage, .migration, .closed: consumptions["error"]?.increment()
        default: consumptions["rejected"]?.increment()
        }
    }

    /// Records how long an operation took since `start` (from `DispatchTime.now().uptimeNanoseconds`).
    package func duration(_ operation: Operation, since start: UInt64) {
        let now = DispatchTime.now().uptimeNanoseconds
        timers[operation]?.recordNanoseconds(Int64(now &- start))
    }
}
