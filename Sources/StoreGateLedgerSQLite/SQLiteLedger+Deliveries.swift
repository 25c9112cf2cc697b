public import Foundation
import StoreGateCore
public import StoreGateLedger

/// Webhook deliveries in the SQLite file (schema 3). One writer at a time, so a claim is a
/// read and an update in one write transaction.
extension SQLiteLedger {
    static let deliveryColumns = """
        endpoint, sequence, event_id, event_type, account_id, status, attempts, first_attempt_at, next_attempt_at, \
        last_status, last_error, delivered_at
        """

    public func fanOut(endpoint: String, types: Set<String>?, limit: Int, now: Date) async throws(LedgerError) -> Int {
        try LedgerPlanner.checkDeliveryArguments(endpoint: endpoint, limit: limit)
        return try await write { connection throws(LedgerError) -> Int in
            var cursor: Int64?
            try connection.query("SELECT sequence FROM ledger_webhook_cursors WHERE endpoint = ?", [.text(endpoint)]) { row throws(LedgerError) in
                cursor = row.integer(0)
            }
            guard let start = cursor else {
                // A new endpoint starts at the end of the stream.
                try connection.run(
                    "INSERT INTO ledger_webhook_cursors (endpoint, sequence) SELECT ?, COALESCE(MAX(sequence), 0) FROM ledger_events",
                    [.text(endpoint)]
                )
                return 0
            }
            let events = try Self.loadEvents(connection, after: start, limit: limit)
            guard let last = events.last else { return 0 }
            let due = SQLiteValue.integer(now.ledgerMilliseconds)
            for event in events where types?.contains(event.type.rawValue) ?? true {
                try connection.run("""
                    INSERT INTO ledger_deliveries (endpoint, sequence, event_id, event_type, account_id, status, attempts, next_attempt_at)
                    VALUES (?, ?, ?, ?, ?, 'pending', 0, ?) ON CONFLICT DO NOTHING
                    """, [.text(endpoint), .integer(event.sequence), .text(event.id), .text(event.type.rawValue), .text(event.account.rawValue), due]
                )
            }
            try connection.run("UPDATE ledger_webhook_cursors SET sequence = ? WHERE endpoint = ?", [.integer(last.sequence), .text(endpoint)])
            return events.count
        }
    }

    public func claim(endpoint: String, now: Date, limit: Int, lease: Duration, holder: String) async throws(LedgerError) -> [ClaimedDelivery] {
        try LedgerPlanner.checkDeliveryArguments(endpoint: endpoint, limit: limit)
        let now = now.ledgerMilliseconds
        let until = now + Int64(lease.seconds * 1000)
        return try await write { connection throws(LedgerError) -> [ClaimedDelivery] in
            var claimed: [ClaimedDelivery] = []
            // The oldest pending delivery of each account, if it is due and not leased. The
            // indexes are named: left to itself, SQLite walked the endpoint's every delivery,
            // and for each the account's every earlier one (delivery slowed as the backlog
            // grew: 200 events/s with 125,000 waiting).
            try connection.query("""
                SELECT d.sequence, d.attempts, d.first_attempt_at, e.payload FROM ledger_deliveries d INDEXED BY ledger_deliveries_pending
                JOIN ledger_events e ON e.sequence = d.sequence
                WHERE d.endpoint = ?1 AND d.status = 'pending' AND d.next_attempt_at <= ?2
                  AND (d.claimed_until IS NULL OR d.claimed_until <= ?2)
                  AND NOT EXISTS (SELECT 1 FROM ledger_deliveries p INDEXED BY ledger_deliveries_account
                                  WHERE p.endpoint = d.endpoint AND p.account_id = d.account_id
                                  AND p.status = 'pending' AND p.sequence < d.sequence)
                ORDER BY d.sequence LIMIT ?3
                """, [.text(endpoint), .integer(now), .integer(Int64(limit))]
            ) { row throws(LedgerError) in
                claimed.append(ClaimedDelivery(
                    event: try LedgerEvent(stored: row.blob(3), sequence: row.integer(0)),
                    attempts: Int(row.integer(1)),
                    firstAttemptAt: row.optionalInteger(2).map(Date.init(ledgerMilliseconds:))
                ))
            }
            for delivery in claimed {
                try connection.run(
                    "UPDATE ledger_deliveries SET claimed_by = ?, claimed_until = ? WHERE endpoint = ? AND sequence = ?",
                    [.text(holder), .integer(until), .text(endpoint), .integer(delivery.event.sequence)]
                )
            }
            return claimed
        }
    }

    @discardableResult
    public func complete(endpoint: String, results: [(sequence: Int64, result: DeliveryResult)], holder: String, at date: Date) async throws(LedgerError) -> Set<Int64> {
        try await write { connection throws(LedgerError) -> Set<Int64> in
            var recorded: Set<Int64> = []
            for (sequence, result) in results {
                var found: EventDelivery?
                try connection.query(
                    "SELECT \(Self.deliveryColumns) FROM ledger_deliveries WHERE endpoint = ? AND sequence = ? AND status = 'pending' AND claimed_by = ?",
                    [.text(endpoint), .integer(sequence), .text(holder)]
                ) { row throws(LedgerError) in
                    found = Self.decodeDelivery(row)
                }
                guard var delivery = found else { continue }
                delivery.apply(result, at: date)
                try connection.run("""
                    UPDATE ledger_deliveries SET status = ?, attempts = ?, first_attempt_at = ?, next_attempt_at = ?, last_status = ?,
                        last_error = ?, delivered_at = ?, claimed_by = NULL, claimed_until = NULL
                    WHERE endpoint = ? AND sequence = ?
                    """, Self.stateValues(delivery) + [.text(endpoint), .integer(sequence)]
                )
                recorded.insert(sequence)
            }
            return recorded
        }
    }

    public func deliveries(endpoint: String?, status: EventDelivery.Status?, after: Int64, limit: Int) async throws(LedgerError) -> [EventDelivery] {
        try LedgerPlanner.checkDeliveryArguments(endpoint: endpoint, limit: limit)
        return try await perform { () throws(LedgerError) in
            try self.read(snapshot: false) { connection throws(LedgerError) in
                var result: [EventDelivery] = []
                // A status (the failed ones, as operators ask) reads its index in sequence
                // order, an endpoint its primary key; both absent, every delivery is looked at.
                let filter = status != nil
                    ? "FROM ledger_deliveries INDEXED BY ledger_deliveries_status WHERE status = ?2 AND sequence > ?1 AND (?3 IS NULL OR endpoint = ?3)"
                    : endpoint != nil
                    ? "FROM ledger_deliveries WHERE endpoint = ?3 AND sequence > ?1 AND ?2 IS NULL"
                    : "FROM ledger_deliveries WHERE sequence > ?1 AND ?2 IS NULL AND ?3 IS NULL"
                try connection.query(
                    "SELECT \(Self.deliveryColumns) \(filter) ORDER BY sequence, endpoint LIMIT ?4",
                    [.integer(after), .optional(status?.rawValue), .optional(endpoint), .integer(Int64(limit))]
                ) { row throws(LedgerError) in
                    result.append(Self.decodeDelivery(row))
                }
                return result
            }
        }
    }

    @discardableResult
    public func redeliver(endpoint: String, sequence: Int64, at date: Date) async throws(LedgerError) -> Bool {
        try await write { connection throws(LedgerError) -> Bool in
            try connection.run("""
                UPDATE ledger_deliveries SET status = 'pending', attempts = 0, first_attempt_at = NULL, next_attempt_at = ?,
                    delivered_at = NULL, claimed_by = NULL, claimed_until = NULL
                WHERE endpoint = ? AND sequence = ?
                """, [.integer(date.ledgerMilliseconds), .text(endpoint), .integer(sequence)]
            ) > 0
        }
    }

    public func deliveryCounts(of statuses: Set<EventDelivery.Status>) async throws(LedgerError) -> [String: [EventDelivery.Status: Int]] {
        let wanted = statuses.map(\.rawValue).sorted()
        guard !wanted.isEmpty else { return [:] }
        let placeholders = wanted.map { _ in "?" }.joined(separator: ", ")
        return try await perform { () throws(LedgerError) in
            try self.read(snapshot: false) { connection throws(LedgerError) in
                var counts: [String: [EventDelivery.Status: Int]] = [:]
                try connection.query(
                    "SELECT endpoint, status, COUNT(*) FROM ledger_deliveries WHERE status IN (\(placeholders)) GROUP BY endpoint, status",
                    wanted.map { .text($0) }
                ) { row throws(LedgerError) in
                    if let status = EventDelivery.Status(rawValue: row.text(1)) { counts[row.text(0), default: [:]][status] = Int(row.integer(2)) }
                }
                return counts
            }
        }
    }

    // MARK: Rows

    private static func stateValues(_ delivery: EventDelivery) -> [SQLiteValue] {
        [
            .text(delivery.status.rawValue), .integer(Int64(delivery.attempts)), .optional(delivery.firstAttemptAt?.ledgerMilliseconds),
            .optional(delivery.nextAttemptAt?.ledgerMilliseconds), .optional(delivery.lastStatus), .optional(delivery.lastError),
            .optional(delivery.deliveredAt?.ledgerMilliseconds),
        ]
    }

    private static func decodeDelivery(_ row: SQLiteRow) -> EventDelivery {
        EventDelivery(
            endpoint: row.text(0), sequence: row.integer(1), eventId: row.text(2), eventType: row.text(3),
            account: AccountID(stored: row.text(4)), status: EventDelivery.Status(rawValue: row.text(5)) ?? .failed,
            attempts: Int(row.integer(6)), firstAttemptAt: row.optionalInteger(7).map(Date.init(ledgerMilliseconds:)),
            nextAttemptAt: row.optionalInteger(8).map(Date.init(ledgerMilliseconds:)), lastStatus: row.optionalInteger(9).map { Int($0) },
            lastError: row.optionalText(10), deliveredAt: row.optionalInteger(11).map(Date.init(ledgerMilliseconds:))
        )
    }
}
