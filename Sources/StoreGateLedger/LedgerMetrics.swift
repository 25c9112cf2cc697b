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

    /// Runs a recording: timed, and counted by its outcome or its error.
    package func measureRecord(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(LedgerError) -> RecordOutcome
    ) async throws(LedgerError) -> RecordOutcome {
        try await measure(.record, isolation: isolation, body) { outcome in
            records[!outcome.newTransactionIds.isEmpty ? "new" : (outcome.updatedTransactionIds.isEmpty ? "duplicate" : "updated")]?.increment()
        } failed: { error in
            switch error.code {
            case .ownedByAnotherAccount, .appAccountTokenMismatch: records["conflict"]?.increment()
            case .storage, .migration, .closed: records["error"]?.increment()
            default: records["rejected"]?.increment()
            }
        }
    }

    /// Runs the taking of a notification: timed, and counted as applied, duplicate or error.
    package func measureNotification(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(LedgerError) -> NotificationOutcome
    ) async throws(LedgerError) -> NotificationOutcome {
        try await measure(.notification, isolation: isolation, body) { outcome in
            notifications[outcome.isDuplicate ? "duplicate" : "applied"]?.increment()
        } failed: { _ in
            notifications["error"]?.increment()
        }
    }

    /// Runs a consumption: timed, and counted by its outcome or its error.
    package func measureConsumption(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(LedgerError) -> ConsumptionReceipt
    ) async throws(LedgerError) -> ConsumptionReceipt {
        try await measure(.consume, isolation: isolation, body) { receipt in
            consumptions[receipt.isReplay ? "replay" : "consumed"]?.increment()
        } failed: { error in
            switch error.code {
            case .insufficientBalance: consumptions["insufficient"]?.increment()
            case .storage, .migration, .closed: consumptions["error"]?.increment()
            default: consumptions["rejected"]?.increment()
            }
        }
    }

    /// Runs a query: timed.
    package func measureQuery<T>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(LedgerError) -> T
    ) async throws(LedgerError) -> T {
        try await measure(.query, isolation: isolation, body) { _ in } failed: { _ in }
    }

    /// Runs `body` in the caller's isolation, records its duration, and reports its result.
    private func measure<T>(
        _ operation: Operation,
        isolation: isolated (any Actor)?,
        _ body: () async throws(LedgerError) -> T,
        succeeded: (T) -> Void,
        failed: (LedgerError) -> Void
    ) async throws(LedgerError) -> T {
        let start = DispatchTime.now().uptimeNanoseconds
        defer { timers[operation]?.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds &- start)) }
        do throws(LedgerError) {
            let result = try await body()
            succeeded(result)
            return result
        } catch {
            failed(error)
            throw error
        }
    }
}
