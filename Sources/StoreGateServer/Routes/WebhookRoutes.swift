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
        if let endpoint, try await storedEndpoint(endpoint, context: context) == nil {
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

/// `POST /v1/webhooks/endpoints/{endpoint}/enable` (`WebhookEndpointEnabled`).
struct WebhookEndpointEnabledReply: JSONWritable {
    let endpoint: String
    let wasDisabled: Bool

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("endpoint", endpoint)
            json.member("state", "enabled")
            json.member("wasDisabled", wasDisabled)
        }
    }
}

extension Endpoints {
    /// `POST /v1/webhooks/endpoints/{endpoint}/enable`: enables an endpoint a 410 disabled;
    /// its pending deliveries resume, each account's in order (on every instance within
    /// ``WebhookDeliveryPolicy/stateInterval``). Enabling an enabled endpoint changes nothing.
    @Sendable func enableWebhookEndpoint(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let endpoint = try Self.pathParameter("endpoint", context)
        guard try await storedEndpoint(endpoint, context: context) != nil else {
            throw APIError(.notFound, .webhookEndpointNotFound, "no webhook endpoint is named '\(endpoint)'", field: "endpoint")
        }
        let store = ledger
        let outcome: WebhookEndpointState.Enabling
        do throws(LedgerError) {
            outcome = try await WebhookEndpointState.enable(endpoint, in: store, holder: "api-\(UUID().uuidString.lowercased())", now: now())
        } catch {
            throw APIError.ledger(error, argumentStatus: .badRequest, logger: context.logger)
        }
        switch outcome {
        case .enabled(let wasDisabled):
            if wasDisabled {
                context.logger.notice("a disabled webhook endpoint was enabled again by hand", metadata: ["endpoint": "\(endpoint)"])
            }
            return JSONReply.response(WebhookEndpointEnabledReply(endpoint: endpoint, wasDisabled: wasDisabled))
        case .busy(let until):
            var error = APIError(.conflict, .webhookEndpointBusy, "another instance is changing the endpoint's state right now; try again", field: "endpoint")
            error.isRetryable = true
            let seconds = max(1, Int((until.map { $0.timeIntervalSince(now()) } ?? 1).rounded(.up)))
            error.headers[.retryAfter] = String(seconds)
            throw error
        }
    }
}

extension Endpoints {
    /// The webhook deliveries of the event stream, and the endpoints' states.
    var webhookRoutes: [Route] {
        [
            Route(.get, "/v1/webhooks/deliveries", .apiKey(.webhooksManage), readDeliveries),
            Route(.post, "/v1/webhooks/deliveries/:endpoint/:sequence/redeliver", .apiKey(.webhooksManage), redeliver),
            Route(.post, "/v1/webhooks/endpoints/:endpoint/enable", .apiKey(.webhooksManage), enableWebhookEndpoint),
        ]
    }
}
