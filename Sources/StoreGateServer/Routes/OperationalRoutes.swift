import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StoreGateCore
import StoreGateLedger
import StoreGateSync
import StoreGateWorkers
import Logging

/// `GET /readyz` (`ReadyReply`).
struct ReadyReply: JSONWritable {
    let readiness: Readiness
    /// Apple roots loaded from the trust directory (each matching a pin).
    let appleRootFiles: Int
    /// Opt-in anchors loaded from the trust directory (a test CA, Xcode's certificate).
    let optInAnchors: Int

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("status", readiness.isReady ? "ready" : "not_ready")
            json.key("checks")
            json.object { json in
                json.key("database")
                json.object { json in
                    json.member("status", readiness.database.rawValue)
                    json.member("backend", readiness.backend)
                }
                json.key("trustAnchors")
                json.object { json in
                    json.member("status", readiness.trustAnchors.rawValue)
                    json.member("pinnedAppleRoots", TrustStore.pinnedAppleRoots.count)
                    json.member("appleRootFiles", appleRootFiles)
                    json.member("optInAnchors", optInAnchors)
                }
                if !readiness.workers.isEmpty {
                    json.key("workers")
                    json.object { json in
                        json.member("status", readiness.workersStatus.rawValue)
                        json.key("workers")
                        json.array(readiness.workers) { json, worker in
                            json.object { json in
                                json.member("name", worker.name)
                                json.member("status", worker.health.rawValue)
                                json.member("rounds", worker.rounds)
                                json.member("failures", worker.failures)
                                json.member("lastSuccessAt", worker.lastSuccessAt)
                                json.member("lastFailureAt", worker.lastFailureAt)
                                json.member("lastError", worker.consecutiveFailures > 0 ? worker.lastError : nil)
                                json.member("stallAfterSeconds", Int(worker.stallAfter.components.seconds))
                            }
                        }
                    }
                }
                if let status = readiness.notificationsStatus {
                    json.key("appStoreNotifications")
                    json.object { json in
                        json.member("status", status.rawValue)
                        json.key("lastTestNotifications")
                        let results = (try? readiness.notifications?.get()) ?? []
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
    /// Liveness: the process answers.
    @Sendable func health(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        JSONReply.response(HealthReply())
    }

    /// Readiness: the database answers (and SQLite takes a write) within a second at most,
    /// and the trust anchors are loaded; background workers are reported.
    @Sendable func ready(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let readiness = await readiness(logger: context.logger)
        let store = verification.chainVerifier.trustStore
        return JSONReply.response(
            ReadyReply(readiness: readiness, appleRootFiles: store.appleRoots.count, optInAnchors: store.optInAnchors.count),
            status: readiness.isReady ? .ok : .serviceUnavailable
        )
    }

    /// Prometheus text exposition.
    @Sendable func metricsExposition(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        var bytes = metrics.exposition()
        bytes += await analyticsGauges(context: context)
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes))
        )
    }

    /// The OpenAPI 3.1 document of the service.
    @Sendable func openAPI(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        guard let document = openAPIDocument else {
            throw APIError(.notFound, .notFound, "the OpenAPI document is not installed beside this binary")
        }
        return Response(
            status: .ok,
            headers: [.contentType: "application/yaml"],
            body: .init(byteBuffer: ByteBuffer(bytes: document))
        )
    }
}

extension Endpoints {
    /// Health, readiness, metrics and the API's description (no key).
    var operationalRoutes: [Route] {
        [
            Route(.get, "/healthz", .open, health),
            Route(.get, "/readyz", .open, ready),
            Route(.get, "/metrics", .open, metricsExposition),
            Route(.get, "/openapi.yaml", .open, openAPI),
        ]
    }

    /// Every API route, feature by feature: the one list the router, the 405 answers and the
    /// OpenAPI check read.
    var routes: [Route] {
        verificationRoutes + notificationRoutes + accountRoutes + grantRoutes + transferRoutes + offerRoutes + extensionRoutes + eventRoutes + analyticsRoutes
            + webhookRoutes + webhookEndpointRoutes + keyRoutes + syncRoutes + legacyRoutes + operationalRoutes
    }
}
