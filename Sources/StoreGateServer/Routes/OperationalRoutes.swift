import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StoreGateCore
import StoreGateLedger
import StoreGateSync
import Logging

/// `GET /readyz` (`ReadyReply`).
struct ReadyReply: JSONWritable {
    struct Database {
        let status: String
        let backend: String
    }

    struct TrustAnchors {
        let status: String
        /// Apple roots pinned by fingerprint in the code (always 2).
        let pinnedAppleRoots: Int
        /// Apple roots loaded from the trust directory (each matching a pin).
        let appleRootFiles: Int
        /// Opt-in anchors loaded from the trust directory (a test CA, Xcode's certificate).
        let optInAnchors: Int
    }

    struct Checks {
        let database: Database
        let trustAnchors: TrustAnchors
        /// The last test notification per environment (`POST /v1/sync/test-notification`),
        /// when the App Store sync is configured; informative, it does not decide readiness.
        let appStoreNotifications: [TestNotificationCheck.Result]?
    }

    let status: String
    let checks: Checks

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("status", status)
            json.key("checks")
            json.object { json in
                json.key("database")
                json.object { json in
                    json.member("status", checks.database.status)
                    json.member("backend", checks.database.backend)
                }
                json.key("trustAnchors")
                json.object { json in
                    json.member("status", checks.trustAnchors.status)
                    json.member("pinnedAppleRoots", checks.trustAnchors.pinnedAppleRoots)
                    json.member("appleRootFiles", checks.trustAnchors.appleRootFiles)
                    json.member("optInAnchors", checks.trustAnchors.optInAnchors)
                }
                if let results = checks.appStoreNotifications {
                    json.key("appStoreNotifications")
                    json.object { json in
                        json.member("status", results.isEmpty ? "unchecked" : results.allSatisfy(\.passed) ? "ok" : "failing")
                        json.key("lastTestNotifications")
                        json.array(results) { json, result in
                            json.object { json in
                                json.member("environment", result.environment)
                                json.member("checkedAt", result.checkedAt)
                                json.member("passed", result.passed)
                                json.member("failedHop", result.hops.last { !$0.isOK }?.detail)
                            }
                        }
                    }
                }
            }
        }
    }
}

extension Endpoints {
    /// The longest `/readyz` waits for the database: a load balancer's probe must get its
    /// answer (503) well within its own timeout.
    static let readinessTimeout: Duration = .milliseconds(900)

    /// Liveness: the process answers.
    @Sendable func health(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        JSONReply.response(HealthReply())
    }

    /// Readiness: the database answers (and SQLite takes a write) within a second at most,
    /// and the trust anchors are loaded.
    @Sendable func ready(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        var databaseStatus = "ok"
        let ledger = self.ledger
        do throws(LedgerError) {
            try await withLedgerDeadline(min(configuration.databaseTimeout, Self.readinessTimeout)) { () throws(LedgerError) in
                try await ledger.checkHealth()
            }
        } catch {
            context.logger.warning("readiness: the ledger did not answer", metadata: ["ledger.code": "\(error.code)", "ledger.reason": "\(error.reason)"])
            databaseStatus = "failing"
        }
        let store = verification.chainVerifier.trustStore
        let anchors = ReadyReply.TrustAnchors(
            status: TrustStore.pinnedAppleRoots.isEmpty ? "failing" : "ok",
            pinnedAppleRoots: TrustStore.pinnedAppleRoots.count,
            appleRootFiles: store.appleRoots.count,
            optInAnchors: store.optInAnchors.count
        )
        var notifications: [TestNotificationCheck.Result]?
        if configuration.isSyncConfigured, databaseStatus == "ok", let store = ledger as? any LeasedStateStore {
            notifications = (try? await TestNotificationCheck.lastResults(in: store)) ?? []
        }
        let isReady = databaseStatus == "ok" && anchors.status == "ok"
        return JSONReply.response(
            ReadyReply(
                status: isReady ? "ready" : "not_ready",
                checks: .init(database: .init(status: databaseStatus, backend: ledger.backend), trustAnchors: anchors, appStoreNotifications: notifications)
            ),
            status: isReady ? .ok : .serviceUnavailable
        )
    }

    /// Prometheus text exposition.
    @Sendable func metricsExposition(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let bytes = metrics.exposition()
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes))
        )
    }

    /// The OpenAPI 3.1 document of the service.
    @Sendable func openAPI(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        guard let document = openAPIDocument else {
            throw APIError(.notFound, "not_found", "the OpenAPI document is not installed beside this binary")
        }
        return Response(
            status: .ok,
            headers: [.contentType: "application/yaml"],
            body: .init(byteBuffer: ByteBuffer(bytes: document))
        )
    }
}
