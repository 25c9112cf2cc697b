import Foundation
import Hummingbird
import NIOCore
import StoreGateEvents
import StoreGateLedger

extension Endpoints {
    /// The events page size when `limit` is not given.
    static let defaultEventPage = 100

    /// `GET /v1/events?after=CURSOR&limit=N`: the ledger's events after `after` (0, the
    /// default, reads from the start), in sequence order; `cursor` in the reply is the `after`
    /// of the next page. A page reads at most `limit` rows by primary key, so paging through
    /// any number of events holds one page in memory.
    @Sendable func readEvents(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        let after = try Self.integerQuery(query["after"].map(String.init), name: "after", default: 0, range: 0...Int64.max)
        let limit = try Self.integerQuery(
            query["limit"].map(String.init), name: "limit", default: Int64(Self.defaultEventPage), range: 1...Int64(maximumEventPage))
        do throws(LedgerError) {
            let events = try await ledger.events(after: after, limit: Int(limit))
            let body = EventJSON.page(events, after: after)
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
        } catch {
            throw APIError.ledger(error, argumentStatus: .badRequest, logger: context.logger)
        }
    }

    /// A decimal integer query parameter within `range`.
    static func integerQuery(_ text: String?, name: String, default value: Int64, range: ClosedRange<Int64>) throws(APIError) -> Int64 {
        guard let text else { return value }
        guard text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = Int64(text), range.contains(number) else {
            throw APIError(.badRequest, .invalidQueryParameter, "'\(name)' must be an integer in \(range.lowerBound)...\(range.upperBound)", field: name)
        }
        return number
    }
}

extension Endpoints {
    /// The ledger's event stream.
    var eventRoutes: [Route] {
        [Route(.get, "/v1/events", .apiKey(.eventsRead), readEvents)]
    }
}
