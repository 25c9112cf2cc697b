import Foundation
import Metrics
import StoreGateAppStoreClient
import StoreGateCore

/// The sync's instruments (Prometheus names):
/// - `storegate_sync_runs_total{environment,outcome}`
/// - `storegate_sync_notifications_total{environment,outcome}`: `recovered`, `duplicate`, `rejected`
/// - `storegate_sync_apple_errors_total{environment,code}`: Apple's `errorCode`, or the client's code
/// - `storegate_sync_cursor_timestamp_seconds{environment}`: the end of the last synced window
/// - `storegate_sync_last_success_timestamp_seconds{environment}`
/// - `storegate_sync_lag_seconds{environment}`: now less the cursor
/// - `storegate_sync_accounts_refreshed_total{outcome}` (``AccountRefresher``)
/// - `storegate_sync_consumption_total{environment,outcome}` (``ConsumptionResponder``)
struct SyncMetrics: Sendable {
    let factory: any MetricsFactory
    let environment: String

    init(factory: any MetricsFactory, environment: AppStoreEnvironment) {
        self.factory = factory
        self.environment = environment.rawValue
    }

    func appleError(_ error: AppStoreClientError) {
        let code = error.apiError.map { String($0.rawValue) } ?? error.code.description
        Counter(label: "storegate_sync_apple_errors_total", dimensions: [("environment", environment), ("code", code)], factory: factory).increment()
    }

    func run(_ report: NotificationHistorySync.Report, cursor: SyncCursor?, now: Date) {
        Counter(label: "storegate_sync_runs_total", dimensions: [("environment", environment), ("outcome", report.outcome.rawValue)], factory: factory).increment()
        for (outcome, count) in [("recovered", report.recovered), ("duplicate", report.duplicates), ("rejected", report.rejected)] where count > 0 {
            Counter(label: "storegate_sync_notifications_total", dimensions: [("environment", environment), ("outcome", outcome)], factory: factory)
                .increment(by: count)
        }
        guard let cursor else { return }
        if let until = cursor.syncedUntil {
            Gauge(label: "storegate_sync_cursor_timestamp_seconds", dimensions: [("environment", environment)], factory: factory).record(Double(until) / 1000)
            Gauge(label: "storegate_sync_lag_seconds", dimensions: [("environment", environment)], factory: factory)
                .record(max(0, now.timeIntervalSince1970 - Double(until) / 1000))
        }
        if let success = cursor.lastSuccessAt {
            Gauge(label: "storegate_sync_last_success_timestamp_seconds", dimensions: [("environment", environment)], factory: factory).record(Double(success) / 1000)
        }
    }

    static func accountRefreshed(_ outcome: String, factory: any MetricsFactory) {
        Counter(label: "storegate_sync_accounts_refreshed_total", dimensions: [("outcome", outcome)], factory: factory).increment()
    }

    static func consumption(_ outcome: String, environment: String, factory: any MetricsFactory) {
        Counter(label: "storegate_sync_consumption_total", dimensions: [("environment", environment), ("outcome", outcome)], factory: factory).increment()
    }
}
