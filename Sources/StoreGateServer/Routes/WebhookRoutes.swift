import Foundation
import Hummingbird
import Logging
import NIOCore
import StoreGateCore
import StoreGateEvents
import StoreGateLedger

/// A page of `GET /v1/webhooks/deliveries` (`DeliveryPage`).
struct DeliveryPageReply: JSONWritable {
    let deliveries: [EventDelivery]
    let cursor: Int64

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("deliveries")
            json.array(deliveries) { json, delivery in
                json.object { json in
                    json.member("endpoint", delivery.endpoint)
                    json.member("sequence", delivery.sequence)
                    json.member("eventId", delivery.eventId)
                    json.member("eventType", delivery.eventType)
                    json.member("account", delivery.account.rawValue)
                    json.member("status", delivery.status.rawValue)
                    json.member("attempts", delivery.attempts)
                    json.member("firstAttemptAt", delivery.firstAttemptAt)
                    json.member("nextAttemptAt", delivery.nextAttemptAt)
                    json.member("lastStatus", delivery.lastStatus)
                    json.member("lastError", delivery.lastError)
                    json.member("deliveredAt", delivery.deliveredAt)
                }
            }
            json.member("cursor", cursor)
        }
    }
}

extension Endpoints {
    /// `GET /v1/webhooks/deliveries?status=&endpoint=&after=&limit=`: deliveries by sequence.
    @Sendable func readDeliveries(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        var status: EventDelivery.Status?
        if let text = query["status"].map(String.init) {
            guard let parsed = EventDelivery.Status(rawValue: text) else {
                throw APIError(.badRequest, .invalidQueryParameter, "'status' is pending, delivered or failed", field: "status")
            }
            status = parsed
        }
        let endpoint = query["endpoint"].map(String.init)
        if let endpoint, !configuration.webhooks.contains(where: { $0.name == endpoint }) {
            throw APIError(.badRequest, .invalidQueryParameter, "no webhook endpoint is named '\(endpoint)'", field: "endpoint")
        }
        let after = try Self.integerQuery(query["after"].map(String.init), name: "after", default: 0, range: 0...Int64.max)
        let limit = try Self.integerQuery(query["limit"].map(String.init), name: "limit", default: 100, range: 1...Int64(maximumEventPage))
        let store = ledger
        do throws(LedgerError) {
            let deliveries = try await store.deliveries(endpoint: endpoint, status: status, after: after, limit: Int(limit))
            return JSONReply.response(DeliveryPageReply(deliveries: deliveries, cursor: deliveries.last?.sequence ?? after))
        } catch {
            throw APIError.ledger(error, argumentStatus: .badRequest, logger: context.logger)
        }
    }

    /// `POST /v1/webhooks/deliveries/{endpoint}/{sequence}/redeliver`: sends a delivery again
    /// (a failed one, or a delivered one a receiver lost), from its first attempt.
    @Sendable func redeliver(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let endpoint = try Self.pathParameter("endpoint", context)
        let sequence = try Self.integerQuery(try Self.pathParameter("sequence", context), name: "sequence", default: 0, range: 1...Int64.max)
        let store = ledger
        let found: Bool
        do throws(LedgerError) {
            found = try await store.redeliver(endpoint: endpoint, sequence: sequence, at: now())
        } catch {
            throw APIError.ledger(error, argumentStatus: .badRequest, logger: context.logger)
        }
        guard found else {
            throw APIError(.notFound, .deliveryNotFound, "endpoint '\(endpoint)' has no delivery of event \(sequence)")
        }
        context.logger.notice("a webhook delivery was queued again", metadata: ["endpoint": "\(endpoint)", "sequence": "\(sequence)"])
        return JSONReply.response(RedeliveredReply(endpoint: endpoint, sequence: sequence), status: .accepted)
    }
}

struct RedeliveredReply: JSONWritable {
    let endpoint: String
    let sequence: Int64

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("endpoint", endpoint)
            json.member("sequence", sequence)
            json.member("status", "pending")
        }
    }
}

extension Endpoints {
    /// The webhook deliveries of the event stream.
    var webhookRoutes: [Route] {
        [
            Route(.get, "/v1/webhooks/deliveries", .apiKey(.webhooksManage), readDeliveries),
            Route(.post, "/v1/webhooks/deliveries/:endpoint/:sequence/redeliver", .apiKey(.webhooksManage), redeliver),
        ]
    }
}
