public import Foundation
import Logging
import PostgresNIO
import StoreGateCore
public import StoreGateLedger

/// Webhook deliveries in PostgreSQL (schema 3), shared by every instance: the fan-out of an
/// endpoint runs in one instance at a time (its cursor row is locked, `SKIP LOCKED` for the
/// others), and claims take due rows `FOR UPDATE SKIP LOCKED` and lease them, so two
/// instances never send the same delivery while its lease runs.
enum PostgresDeliveries {
    static let migration: [String] = [
        """
        CREATE TABLE ledger_webhook_cursors (
            endpoint TEXT NOT NULL PRIMARY KEY,
            sequence BIGINT NOT NULL
        )
        """,
        """
        CREATE TABLE ledger_deliveries (
            endpoint TEXT NOT NULL,
            sequence BIGINT NOT NULL,
            event_id TEXT NOT NULL,
            event_type TEXT NOT NULL,
            account_id TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
            attempts BIGINT NOT NULL,
            first_attempt_at BIGINT,
            next_attempt_at BIGINT,
            claimed_by TEXT,
            claimed_until BIGINT,
            last_status BIGINT,
            last_error TEXT,
            delivered_at BIGINT,
            PRIMARY KEY (endpoint, sequence)
        )
        """,
        "CREATE INDEX ledger_deliveries_pending ON ledger_deliveries (endpoint, sequence) WHERE status = 'pending'",
        "CREATE INDEX ledger_deliveries_account ON ledger_deliveries (endpoint, account_id, sequence) WHERE status = 'pending'",
        "CREATE INDEX ledger_deliveries_status ON ledger_deliveries (status, sequence)",
    ]

    static let columns = """
        endpoint, sequence, event_id, event_type, account_id, status, attempts, first_attempt_at, next_attempt_at, \
        last_status, last_error, delivered_at
        """

    static func decode(_ row: PostgresRandomAccessRow) throws -> EventDelivery {
        EventDelivery(
            endpoint: try row.text(0), sequence: try row.integer(1), eventId: try row.text(2), eventType: try row.text(3),
            account: AccountID(stored: try row.text(4)), status: EventDelivery.Status(rawValue: try row.text(5)) ?? .failed,
            attempts: try row.int(6), firstAttemptAt: try row.optionalDate(7), nextAttemptAt: try row.optionalDate(8),
            lastStatus: try row.optionalInteger(9).map { Int($0) }, lastError: try row.optionalText(10), deliveredAt: try row.optionalDate(11)
        )
    }
}

extension PostgresLedger {
    public func fanOut(endpoint: String, types: Set<String>?, limit: Int, now: Date) async throws(LedgerError) -> Int {
        try LedgerPlanner.checkDeliveryArguments(endpoint: endpoint, limit: limit)
        let logger = self.logger
        // Number what committed before this call, outside the fan-out's own transaction.
        try await withConnection { connection in try await Self.settleEvents(connection, logger: logger) }
        return try await transaction { connection in
            let created = try await Self.rows(connection, """
                INSERT INTO ledger_webhook_cursors (endpoint, sequence) SELECT $1, COALESCE(MAX(sequence), 0) FROM ledger_events
                ON CONFLICT (endpoint) DO NOTHING RETURNING sequence
                """, [.text(endpoint)], logger: logger)
            // A new endpoint starts at the end of the stream.
            guard created.isEmpty else { return 0 }
            let locked = try await Self.rows(
                connection, "SELECT sequence FROM ledger_webhook_cursors WHERE endpoint = $1 FOR UPDATE SKIP LOCKED", [.text(endpoint)], logger: logger)
            // Another instance is fanning out for this endpoint.
            guard let cursor = try locked.first?.integer(0) else { return 0 }
            let events = try await Self.loadEvents(connection, after: cursor, limit: limit, logger: logger)
            guard let last = events.last else { return 0 }
            let chosen = events.filter { types?.contains($0.type.rawValue) ?? true }
            if !chosen.isEmpty {
                try await Self.run(connection, """
                    INSERT INTO ledger_deliveries (endpoint, sequence, event_id, event_type, account_id, status, attempts, next_attempt_at)
                    SELECT $1, s, i, t, a, 'pending', 0, $6 FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[]) AS u(s, i, t, a)
                    ON CONFLICT DO NOTHING
                    """, [
                        .text(endpoint), .integers(chosen.map(\.sequence)), .texts(chosen.map(\.id)), .texts(chosen.map(\.type.rawValue)),
                        .texts(chosen.map(\.account.rawValue)), .integer(now.ledgerMilliseconds),
                    ], logger: logger)
            }
            try await Self.run(connection, "UPDATE ledger_webhook_cursors SET sequence = $1 WHERE endpoint = $2", [.integer(last.sequence), .text(endpoint)], logger: logger)
            return events.count
        }
    }

    public func claim(endpoint: String, now: Date, limit: Int, lease: Duration, holder: String) async throws(LedgerError) -> [ClaimedDelivery] {
        try LedgerPlanner.checkDeliveryArguments(endpoint: endpoint, limit: limit)
        let logger = self.logger
        let now = now.ledgerMilliseconds
        let until = now + Int64(lease.seconds * 1000)
        return try await withConnection { connection in
            // The oldest pending delivery of each account, if due and not leased; rows another
            // instance is claiming right now are skipped, not waited for. "Oldest" is a scalar
            // subquery, which PostgreSQL runs per candidate with its account bound (one probe of
            // the account index): as NOT EXISTS, statistics not yet updated after a burst of
            // fan-outs made it an anti-join that read every pending delivery for each candidate
            // (claims took 80-300 ms with 25,000 waiting).
            let rows = try await Self.rows(connection, """
                WITH due AS (
                    SELECT d.endpoint, d.sequence FROM ledger_deliveries d
                    WHERE d.endpoint = $1 AND d.status = 'pending' AND d.next_attempt_at <= $2
                      AND (d.claimed_until IS NULL OR d.claimed_until <= $2)
                      AND d.sequence = (SELECT min(p.sequence) FROM ledger_deliveries p
                                        WHERE p.endpoint = d.endpoint AND p.account_id = d.account_id AND p.status = 'pending')
                    ORDER BY d.sequence LIMIT $3
                    FOR UPDATE OF d SKIP LOCKED
                ), claimed AS (
                    UPDATE ledger_deliveries d SET claimed_by = $4, claimed_until = $5 FROM due
                    WHERE d.endpoint = due.endpoint AND d.sequence = due.sequence
                    RETURNING d.sequence, d.attempts, d.first_attempt_at
                )
                SELECT c.sequence, c.attempts, c.first_attempt_at, e.payload::text
                FROM claimed c JOIN ledger_events e ON e.sequence = c.sequence ORDER BY c.sequence
                """, [.text(endpoint), .integer(now), .integer(Int64(limit)), .text(holder), .integer(until)], logger: logger)
            return try rows.map { row in
                ClaimedDelivery(
                    event: try LedgerEvent(stored: Array(try row.text(3).utf8), sequence: try row.integer(0)),
                    attempts: try row.int(1), firstAttemptAt: try row.optionalDate(2)
                )
            }
        }
    }

    @discardableResult
    public func complete(endpoint: String, results: [(sequence: Int64, result: DeliveryResult)], holder: String, at date: Date) async throws(LedgerError) -> Set<Int64> {
        guard !results.isEmpty else { return [] }
        let logger = self.logger
        let bySequence = Dictionary(results.map { ($0.sequence, $0.result) }, uniquingKeysWith: { first, _ in first })
        return try await transaction { connection in
            // One round trip to lock the rows still leased to `holder`, one to write them all.
            var updated: [EventDelivery] = []
            for row in try await Self.rows(connection, """
                SELECT \(PostgresDeliveries.columns) FROM ledger_deliveries
                WHERE endpoint = $1 AND sequence = ANY($2::bigint[]) AND status = 'pending' AND claimed_by = $3
                ORDER BY sequence FOR UPDATE
                """, [.text(endpoint), .integers(bySequence.keys.sorted()), .text(holder)], logger: logger) {
                var delivery = try PostgresDeliveries.decode(row)
                guard let result = bySequence[delivery.sequence] else { continue }
                delivery.apply(result, at: date)
                updated.append(delivery)
            }
            guard !updated.isEmpty else { return [] }
            func numbers(_ values: [Int64?]) -> String {
                "{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}"
            }
            try await Self.run(connection, """
                UPDATE ledger_deliveries d SET status = u.status, attempts = u.attempts, first_attempt_at = u.first_attempt_at,
                    next_attempt_at = u.next_attempt_at, last_status = u.last_status, last_error = u.last_error,
                    delivered_at = u.delivered_at, claimed_by = NULL, claimed_until = NULL
                FROM unnest($2::bigint[], $3::text[], $4::bigint[], $5::text::bigint[], $6::text::bigint[], $7::text::bigint[], $8::text::text[],
                            $9::text::bigint[]) AS u(sequence, status, attempts, first_attempt_at, next_attempt_at, last_status, last_error, delivered_at)
                WHERE d.endpoint = $1 AND d.sequence = u.sequence
                """, [
                    .text(endpoint), .integers(updated.map(\.sequence)), .texts(updated.map(\.status.rawValue)),
                    .integers(updated.map { Int64($0.attempts) }),
                    .text(numbers(updated.map { $0.firstAttemptAt?.ledgerMilliseconds })),
                    .text(numbers(updated.map { $0.nextAttemptAt?.ledgerMilliseconds })),
                    .text(numbers(updated.map { $0.lastStatus.map(Int64.init) })),
                    .text(Self.textArrayLiteral(updated.map(\.lastError))),
                    .text(numbers(updated.map { $0.deliveredAt?.ledgerMilliseconds })),
                ], logger: logger)
            return Set(updated.map(\.sequence))
        }
    }

    /// A PostgreSQL text array literal with NULLs (bound as text, cast to `text[]`).
    static func textArrayLiteral(_ values: [String?]) -> String {
        "{" + values.map { value in
            guard let value else { return "NULL" }
            return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }.joined(separator: ",") + "}"
    }

    public func deliveries(endpoint: String?, status: EventDelivery.Status?, after: Int64, limit: Int) async throws(LedgerError) -> [EventDelivery] {
        try LedgerPlanner.checkDeliveryArguments(endpoint: endpoint, limit: limit)
        let logger = self.logger
        return try await withConnection { connection in
            try await Self.rows(connection, """
                SELECT \(PostgresDeliveries.columns) FROM ledger_deliveries
                WHERE sequence > $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR endpoint = $3)
                ORDER BY sequence, endpoint LIMIT $4
                """, [.integer(after), .optional(status?.rawValue), .optional(endpoint), .integer(Int64(limit))], logger: logger
            ).map(PostgresDeliveries.decode)
        }
    }

    @discardableResult
    public func redeliver(endpoint: String, sequence: Int64, at date: Date) async throws(LedgerError) -> Bool {
        let logger = self.logger
        return try await withConnection { connection in
            try await !Self.rows(connection, """
                UPDATE ledger_deliveries SET status = 'pending', attempts = 0, first_attempt_at = NULL, next_attempt_at = $1,
                    delivered_at = NULL, claimed_by = NULL, claimed_until = NULL
                WHERE endpoint = $2 AND sequence = $3 RETURNING sequence
                """, [.integer(date.ledgerMilliseconds), .text(endpoint), .integer(sequence)], logger: logger).isEmpty
        }
    }

    public func deliveryCounts(of statuses: Set<EventDelivery.Status>) async throws(LedgerError) -> [String: [EventDelivery.Status: Int]] {
        let logger = self.logger
        let wanted = statuses.map(\.rawValue).sorted()
        return try await withConnection { connection in
            var counts: [String: [EventDelivery.Status: Int]] = [:]
            for row in try await Self.rows(
                connection, "SELECT endpoint, status, COUNT(*)::BIGINT FROM ledger_deliveries WHERE status = ANY($1) GROUP BY endpoint, status",
                [.texts(wanted)], logger: logger
            ) {
                if let status = EventDelivery.Status(rawValue: try row.text(1)) { counts[try row.text(0), default: [:]][status] = try row.int(2) }
            }
            return counts
        }
    }
}
