import StoreGateCore

/// The events outbox in PostgreSQL (schema 2).
///
/// ## Sequence = commit order
/// A plain `bigserial` is not enough: two transactions may take numbers 5 and 6 and commit
/// 6 first, and a reader that has seen 6 would never read 5. Every transaction that appends
/// events therefore takes one transaction-scoped advisory lock (``sequenceLock``) right
/// before numbering them and keeps it until it commits: numbers are handed out in commit
/// order, and a reader never sees a gap that a later commit fills. The lock is taken last,
/// after every row lock of the change, and held only for the commit itself.
///
/// ## Consistent "state after"
/// The events' states are computed by the shared Swift planner from the rows the plan read.
/// `ledger_apply_v2` bumps the revision of every family the plan read, and refuses (40001,
/// retried) a plan whose family changed since; consumable balances are read back inside the
/// function after the change.
enum PostgresEvents {
    /// The advisory lock that numbers events ("sgevents" in ASCII).
    static let sequenceLock: Int64 = 0x7367_6576_656E_7473

    static let migration: [String] = [
        "ALTER TABLE ledger_families ADD COLUMN revision BIGINT NOT NULL DEFAULT 0",
        "CREATE SEQUENCE ledger_event_sequence AS BIGINT MINVALUE 1 NO CYCLE",
        """
        CREATE TABLE ledger_events (
            sequence BIGINT PRIMARY KEY,
            id TEXT NOT NULL,
            account_id TEXT NOT NULL,
            type TEXT NOT NULL,
            recorded_at BIGINT NOT NULL,
            payload JSONB NOT NULL
        )
        """,
        load,
        PostgresFunctions.applyWithEvents,
        consume,
    ]

    /// The PL/pgSQL that appends `plan->'events'` (inside `ledger_apply_v2`; declares
    /// `r jsonb` and `balance record`).
    static let appendFromPlan = """
        IF jsonb_array_length(COALESCE(plan->'events', '[]'::jsonb)) > 0 THEN
                PERFORM pg_advisory_xact_lock(\(sequenceLock));
                FOR r IN SELECT value FROM jsonb_array_elements(plan->'events') LOOP
                    IF r->'entitlement'->>'productType' = '\(ProductType.consumable.rawValue)' AND r->>'type' <> 'consumable.consumed' THEN
                        SELECT b.purchased, b.refunded, b.consumed INTO balance FROM ledger_balances b
                        WHERE b.account_id = r->>'account' AND b.product_id = r->>'productId';
                        IF NOT FOUND THEN
                            SELECT 0::bigint AS purchased, 0::bigint AS refunded, 0::bigint AS consumed INTO balance;
                        END IF;
                        r := jsonb_set(r, '{entitlement}', (r->'entitlement') || jsonb_build_object(
                            'isEntitled', balance.purchased > balance.consumed,
                            'balance', jsonb_build_object('purchased', balance.purchased, 'refunded', balance.refunded, 'consumed', balance.consumed)));
                    END IF;
                    INSERT INTO ledger_events (sequence, id, account_id, type, recorded_at, payload)
                    VALUES (nextval('ledger_event_sequence'), r->>'id', r->>'account', r->>'type', (r->>'recordedAt')::bigint, r);
                END LOOP;
            END IF;
        """

    /// `ledger_consume_v2(account, product, quantity, key, consumed at, event id, recorded at)`:
    /// version 1's statement, and the `consumable.consumed` event of a consumption (the same
    /// members as ``LedgerEvent``'s stored form).
    static var consume: String {
        """
        CREATE OR REPLACE FUNCTION ledger_consume_v2(text, text, bigint, text, bigint, text, bigint)
        RETURNS TABLE (kind text, product_id text, quantity bigint, consumed_at bigint, remaining bigint)
        LANGUAGE plpgsql \(PostgresFunctions.settings) AS $fn$
        #variable_conflict use_column
        DECLARE
            result record;
            balance record;
            matched boolean := false;
        BEGIN
            -- A data-modifying WITH must be a top-level statement: the loop's query is one.
            FOR result IN \(PostgresLedger.consumeStatement) LOOP
                matched := true;
                EXIT;
            END LOOP;
            IF NOT matched THEN
                RETURN;
            END IF;
            IF result.text = 'consumed' THEN
                SELECT b.purchased, b.refunded, b.consumed INTO balance FROM ledger_balances b
                WHERE b.account_id = $1 AND b.product_id = $2;
                PERFORM pg_advisory_xact_lock(\(sequenceLock));
                INSERT INTO ledger_events (sequence, id, account_id, type, recorded_at, payload)
                VALUES (nextval('ledger_event_sequence'), $6, $1, 'consumable.consumed', $7, jsonb_build_object(
                    'id', $6, 'type', 'consumable.consumed', 'account', $1, 'productId', $2,
                    'occurredAt', $5, 'recordedAt', $7, 'source', 'consumption', 'quantity', $3, 'idempotencyKey', $4,
                    'entitlement', jsonb_build_object(
                        'productType', '\(ProductType.consumable.rawValue)', 'isEntitled', balance.purchased > balance.consumed,
                        'balance', jsonb_build_object('purchased', balance.purchased, 'refunded', balance.refunded, 'consumed', balance.consumed))));
            END IF;
            RETURN QUERY SELECT result.text, result.product_id, result.quantity, result.consumed_at, result.remaining;
        END;
        $fn$
        """
    }

    /// `ledger_load_v2(family environments, family ids, transaction environments, transaction
    /// ids, notification uuid)`: the touched families with their revisions, the touched
    /// transactions, every transaction and the renewal info of each touched family, and
    /// whether the notification was taken before.
    static var load: String {
        """
        CREATE OR REPLACE FUNCTION ledger_load_v2(text[], text[], text[], text[], text)
        RETURNS TABLE (\(PostgresFunctions.shapeColumns)) LANGUAGE plpgsql STABLE \(PostgresFunctions.settings) AS $fn$
        BEGIN
            RETURN QUERY \(loadStatement);
        END;
        $fn$
        """
    }

    static let loadStatement = [
        PostgresLedger.shaped("f", [0: "f.environment", 2: "f.original_transaction_id", 3: "f.account_id", 21: "f.revision"]) + """
             FROM unnest($1::text[], $2::text[]) AS k(environment, original_transaction_id)
            JOIN LATERAL (SELECT * FROM ledger_families f1
                WHERE f1.environment = k.environment AND f1.original_transaction_id = k.original_transaction_id) f ON true
            """,
        PostgresLedger.shaped("t", PostgresLedger.transactionShape) + """
             FROM unnest($3::text[], $4::text[]) AS k(environment, transaction_id)
            JOIN LATERAL (SELECT * FROM ledger_transactions t1
                WHERE t1.environment = k.environment AND t1.transaction_id = k.transaction_id) t ON true
            """,
        PostgresLedger.shaped("t", PostgresLedger.transactionShape) + """
             FROM unnest($1::text[], $2::text[]) AS k(environment, original_transaction_id)
            JOIN LATERAL (SELECT * FROM ledger_transactions t1
                WHERE t1.environment = k.environment AND t1.original_transaction_id = k.original_transaction_id) t ON true
            """,
        PostgresLedger.shaped("r", PostgresLedger.renewalShape) + """
             FROM unnest($1::text[], $2::text[]) AS k(environment, original_transaction_id)
            JOIN LATERAL (SELECT * FROM ledger_renewals r1
                WHERE r1.environment = k.environment AND r1.original_transaction_id = k.original_transaction_id) r ON true
            """,
        PostgresLedger.shaped("n", [1: "n.notification_uuid"]) + " FROM ledger_notifications n WHERE n.notification_uuid = $5",
    ].joined(separator: "\nUNION ALL\n")
}

enum LoadWithEventsSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_load_v2"
    static let sql = "SELECT * FROM ledger_load_v2($1, $2, $3, $4, $5)"
}

enum ApplyWithEventsSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_apply_v2"
    static let sql = "SELECT ledger_apply_v2($1::jsonb)"
}

enum ConsumeWithEventSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_consume_v2"
    static let sql = "SELECT * FROM ledger_consume_v2($1, $2, $3, $4, $5, $6, $7)"
}

enum EventsSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_events_v2"
    static let sql = "SELECT sequence, payload::text FROM ledger_events WHERE sequence > $1 ORDER BY sequence LIMIT $2"
}
