import Foundation
import Logging
import StoreGateCore
import StoreGateLedger
import StoreGateSync
import StoreGateWorkers

/// How one part of the service (or the whole) is doing: the one health vocabulary of
/// `/readyz` and the console's System page, never compared as display text.
enum HealthStatus: String, Sendable, Hashable, CaseIterable {
    /// Works.
    case ok
    /// Serves requests, but something behind them is behind (a stalled background worker).
    case degraded
    /// Does not work.
    case failing
    /// Not checked yet.
    case unchecked
}

/// What the service's readiness rests on, read once for `/readyz` and the console.
struct Readiness: Sendable {
    /// Whether the ledger answers (and SQLite takes a write) within the readiness deadline.
    var database: HealthStatus
    /// Why it does not.
    var databaseError: LedgerError?
    /// The ledger's backend.
    var backend: String
    /// Whether Apple's roots are pinned.
    var trustAnchors: HealthStatus
    /// The background workers (empty when none runs).
    var workers: [WorkerStatus]
    /// The last test notifications, when the App Store sync is configured; informative.
    var notifications: Result<[TestNotificationCheck.Result], LedgerError>?

    /// Ready to take requests: the database answers and the anchors are loaded. A stalled
    /// worker is reported (``workersStatus``), not a reason to take the instance out of a load
    /// balancer: requests are still answered correctly.
    var isReady: Bool { database == .ok && trustAnchors == .ok }

    /// `degraded` when a worker has not completed a round within its stall limit.
    var workersStatus: HealthStatus {
        workers.contains { $0.health == .stalled } ? .degraded : .ok
    }

    /// The test notifications' status: unchecked before the first, failing when the last of
    /// an environment failed or the results could not be read.
    var notificationsStatus: HealthStatus? {
        switch notifications {
        case nil: nil
        case .failure?: .failing
        case .success(let results)?: results.isEmpty ? .unchecked : results.allSatisfy(\.passed) ? .ok : .failing
        }
    }
}

extension Endpoints {
    /// The longest `/readyz` waits for the database: a load balancer's probe must get its
    /// answer (503) well within its own timeout.
    static let readinessTimeout: Duration = .milliseconds(900)

    /// Reads what readiness rests on.
    func readiness(logger: Logger) async -> Readiness {
        var database = HealthStatus.ok
        var databaseError: LedgerError?
        let ledger = self.ledger
        do throws(LedgerError) {
            try await withLedgerDeadline(min(configuration.databaseTimeout, Self.readinessTimeout)) { () throws(LedgerError) in
                try await ledger.checkHealth()
            }
        } catch {
            logger.warning("readiness: the ledger did not answer", metadata: ["ledger.code": "\(error.code)", "ledger.reason": "\(error.reason)"])
            database = .failing
            databaseError = error
        }
        var notifications: Result<[TestNotificationCheck.Result], LedgerError>?
        if configuration.isSyncConfigured, database == .ok {
            do throws(LedgerError) {
                notifications = .success(try await TestNotificationCheck.lastResults(in: ledger))
            } catch {
                notifications = .failure(error)
            }
        }
        return Readiness(
            database: database, databaseError: databaseError, backend: ledger.backend,
            trustAnchors: TrustStore.pinnedAppleRoots.isEmpty ? .failing : .ok,
            workers: workers.statuses(at: now()), notifications: notifications
        )
    }
}
