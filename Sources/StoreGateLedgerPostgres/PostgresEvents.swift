import StoreGateCore
import StoreGateLedger

/// The events outbox in PostgreSQL (schema 2; PostgreSQL 13 or later for `xid8`).
///
/// ## Sequence = commit order, without serializing commits
/// A plain `bigserial` is not enough: two transactions may take numbers 5 and 6 and commit
/// 6 first, and a reader that has seen 6 would never read 5. Holding one lock through every
/// commit would fix that and cost group commit (measured: 43 % of the recording throughput).
/// Instead, writers append events without a sequence, stamped with their transaction id
/// (`xid8`), and a *sequencer* numbers them later: one transaction at a time (an advisory
/// lock), it numbers the unnumbered events whose transaction is older than every transaction
/// still running (`xid < pg_snapshot_xmin`), in (xid, insertion) order. Numbers therefore only
/// ever grow, and no event can later appear below a number a reader has seen.
///
/// Each account's events must keep their order too: every write takes a transaction-scoped
/// advisory lock per account it appends events for, *before* its first write (before it gets
/// its transaction id), so two changes of one account have transaction ids in commit order.
/// Reading the stream (``PostgresLedger/events(after:limit:)``) and fanning out webhooks run the
/// sequencer first; an event becomes readable once its transaction and every older one ended.
///
/// ## Consistent "state after"
/// The events' states are computed by the shared Swift planner from the rows the plan read.
/// `ledger_apply_v2` and later bump the revision of every family the plan read, and refuse (40001,
/// retried) a plan whose family changed since; consumable balances are read back inside the
/// function after the change.
enum PostgresEvents {
    /// The advisory lock the sequencer holds ("sgevents" in ASCII).
    static let sequencerLock: Int64 = 0x7367_6576_656E_7473
    /// The first key of the per-account advisory locks (two-key form: a key space apart from
    /// the one-key locks).
    static let accountLockClass: Int32 = 0x5347

    static let migration: [String] = [
        "ALTER TABLE ledger_families ADD COLUMN revision BIGINT NOT NULL DEFAULT 0",
        """
        CREATE TABLE ledger_events (
            position BIGSERIAL PRIMARY KEY,
            xid XID8 NOT NULL DEFAULT pg_current_xact_id(),
            sequence BIGINT UNIQUE,
            id TEXT NOT NULL,
            account_id TEXT NOT NULL,
            type TEXT NOT NULL,
            recorded_at BIGINT NOT NULL,
            payload JSONB NOT NULL
        )
        """,
        "CREATE INDEX ledger_events_unsequenced ON ledger_events (xid, position) WHERE sequence IS NULL",
        "CREATE TABLE ledger_event_head (singleton BOOLEAN PRIMARY KEY DEFAULT true CHECK (singleton), last BIGINT NOT NULL)",
        "INSERT INTO ledger_event_head (singleton, last) VALUES (true, 0)",
        load,
        PostgresFunctions.applyWithEvents,
        consume,
        sequencer,
        sequenceUntil,
    ]

    /// `ledger_sequence_until_v2(target xid8)`: runs the sequencer, then says whether every
    /// transaction before `target` has ended (so every event they appended is numbered).
    static var sequenceUntil: String {
        """
        CREATE OR REPLACE FUNCTION ledger_sequence_until_v2(target xid8) RETURNS boolean LANGUAGE plpgsql AS $fn$
        BEGIN
            PERFORM ledger_sequence_events_v2(10000);
            RETURN pg_snapshot_xmin(pg_current_snapshot()) >= target
                AND NOT EXISTS (SELECT 1 FROM ledger_events WHERE sequence IS NULL AND xid < target);
        END;
        $fn$
        """
    }

    /// `ledger_sequence_events_v2(batch)`: numbers up to `batch` events whose transactions
    /// ended, unless another sequencer is at work; returns how many it numbered.
    static var sequencer: String {
        """
        CREATE OR REPLACE FUNCTION ledger_sequence_events_v2(batch integer) RETURNS bigint LANGUAGE plpgsql AS $fn$
        DECLARE
            base bigint;
            numbered bigint;
        BEGIN
            IF NOT pg_try_advisory_xact_lock(\(sequencerLock)) THEN
                RETURN 0;
            END IF;
            SELECT last INTO base FROM ledger_event_head FOR UPDATE;
            WITH pending AS (
                SELECT p.position, row_number() OVER (ORDER BY p.xid, p.position) AS n FROM (
                    SELECT position, xid FROM ledger_events
                    WHERE sequence IS NULL AND xid < pg_snapshot_xmin(pg_current_snapshot())
                    ORDER BY xid, position LIMIT batch
                ) p
            ), updated AS (
                UPDATE ledger_events e SET sequence = base + pending.n FROM pending
                WHERE e.position = pending.position RETURNING 1
            )
            SELECT count(*) INTO numbered FROM updated;
            IF numbered > 0 THEN
                UPDATE ledger_event_head SET last = base + numbered;
            END IF;
            RETURN numbered;
        END;
        $fn$
        """
    }

    /// The PL/pgSQL that takes the per-account locks of `plan->'events'` (first in
    /// `ledger_apply_v2`, before any write).
    static let lockAccountsOfPlan = """
        PERFORM pg_advisory_xact_lock(\(accountLockClass), hashtext(a.account)) FROM (
                SELECT DISTINCT e->>'account' AS account FROM jsonb_array_elements(COALESCE(plan->'events', '[]'::jsonb)) e ORDER BY 1
            ) a;
        """

    /// The PL/pgSQL that locks the accounts of `plan->'events'` from version 3: the one account
    /// the document names (`event_account`, every plan but the clock's) with an expression,
    /// which PL/pgSQL evaluates without starting a statement; several in the order version 2
    /// takes them.
    static let lockAccountOrAccountsOfPlan = """
        IF plan ? 'event_account' THEN
                PERFORM pg_advisory_xact_lock(\(accountLockClass), hashtext(plan->>'event_account'));
            ELSIF plan ? 'events' THEN
                \(lockAccountsOfPlan)
            END IF;
        """

    /// The PL/pgSQL that locks the accounts of version 4's events: the plan's one account
    /// (`event_account`) with an expression, several (the clock's plans) in sorted order, as
    /// ``lockAccountOrAccountsOfPlan`` does with the document's list.
    static let lockAccountOrAccountsOfEvents = """
        IF plan ? 'event_account' THEN
                PERFORM pg_advisory_xact_lock(\(accountLockClass), hashtext(plan->>'event_account'));
            ELSIF event_accounts IS NOT NULL THEN
                PERFORM pg_advisory_xact_lock(\(accountLockClass), hashtext(a.account)) FROM (
                    SELECT DISTINCT account FROM unnest(event_accounts) AS x(account) ORDER BY 1
                ) a;
            END IF;
        """

    /// The PL/pgSQL that appends version 4's events: each one's stored JSON as text
    /// (`event_payloads`), parsed once as it is inserted. An event whose balance the store
    /// states (`event_balanced`) comes without the end of its entitlement
    /// (``LedgerEvent/storedJSON(leavingBalanceOpen:)``); the counters stored after the plan's
    /// changes complete it — text appended, where version 3 merged objects into the parsed
    /// document (`jsonb_set`: 4 µs an event, most of them consumables).
    static let appendFromArrays = """
        IF event_payloads IS NOT NULL THEN
                FOR i IN 1 .. cardinality(event_payloads) LOOP
                    event_text := event_payloads[i];
                    IF event_balanced[i] THEN
                        SELECT b.purchased, b.refunded, b.consumed INTO balance FROM ledger_balances b
                        WHERE b.account_id = event_accounts[i] AND b.product_id = event_products[i];
                        IF NOT FOUND THEN
                            SELECT 0::bigint AS purchased, 0::bigint AS refunded, 0::bigint AS consumed INTO balance;
                        END IF;
                        event_text := event_text || ',"isEntitled":' || (balance.purchased > balance.consumed)::text
                            || ',"balance":{"purchased":' || balance.purchased::text || ',"refunded":' || balance.refunded::text
                            || ',"consumed":' || balance.consumed::text || '}}}';
                    END IF;
                    r := event_text::jsonb;
                    INSERT INTO ledger_events (id, account_id, type, recorded_at, payload)
                    VALUES (r->>'id', event_accounts[i], r->>'type', (r->>'recordedAt')::bigint, r);
                END LOOP;
            END IF;
        """

    /// The PL/pgSQL that appends `plan->'events'` (inside `ledger_apply_v2` and later; declares
    /// `r jsonb` and `balance record`). `guarded`: tested with `plan ? 'events'` (version 3's
    /// document leaves an empty list out).
    static func appendFromPlan(guarded: Bool) -> String {
        (guarded ? "IF plan ? 'events' THEN" : "IF jsonb_array_length(COALESCE(plan->'events', '[]'::jsonb)) > 0 THEN") + appendLoop
    }

    private static let appendLoop = """

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
                    INSERT INTO ledger_events (id, account_id, type, recorded_at, payload)
                    VALUES (r->>'id', r->>'account', r->>'type', (r->>'recordedAt')::bigint, r);
                END LOOP;
            END IF;
        """

    /// `ledger_events_after_v3(after, page)` (schema 7; ``eventsAfterWithRetention`` is the one
    /// read since schema 8): the numbered stream after a sequence, in order,
    /// read along the sequence index whatever the statistics say. As a plain prepared
    /// statement, statistics not yet updated after a burst of appends made PostgreSQL read the
    /// whole account index and sort it for every page (150 ms a page at 100,000 events).
    static let eventsAfter = """
        CREATE OR REPLACE FUNCTION ledger_events_after_v3(after bigint, page integer)
        RETURNS TABLE (event_sequence bigint, event_payload text) LANGUAGE sql STABLE
        SET enable_sort = off SET enable_seqscan = off AS $fn$
            SELECT e.sequence, e.payload::text FROM ledger_events e WHERE e.sequence > after ORDER BY e.sequence LIMIT page
        $fn$
        """

    /// `ledger_events_after_v4(after, page)` (schema 8): version 3's page, each row with how far
    /// retention deleted events — one statement, so the cursor is checked against the state the
    /// page is read from. An empty page needs no check: retention never deletes the newest
    /// numbered event, so events exist after any cursor below what it deleted. No JIT: with
    /// sequential scans priced out, the one-row head table looked expensive enough to compile
    /// the query, 65 ms a page.
    static let eventsAfterWithRetention = """
        CREATE OR REPLACE FUNCTION ledger_events_after_v4(after bigint, page integer)
        RETURNS TABLE (pruned_through bigint, event_sequence bigint, event_payload text) LANGUAGE sql STABLE
        SET enable_sort = off SET enable_seqscan = off SET jit = off AS $fn$
            SELECT (SELECT h.pruned_through FROM ledger_event_head h WHERE h.singleton), e.sequence, e.payload::text
            FROM ledger_events e WHERE e.sequence > after ORDER BY e.sequence LIMIT page
        $fn$
        """

    /// `ledger_prune_events_v1(cutoff, batch)` (schema 8): deletes up to `batch` of the oldest
    /// numbered events recorded before `cutoff`, never the newest, never past an endpoint's
    /// fan-out cursor or up to a pending or failed delivery, with their deliveries;
    /// one pruner at a time (the head row's lock, which the sequencer takes too).
    ///
    /// With no numbered event, `LEAST` ignored the missing newest and moved the retention mark
    /// `batch` ahead of any event: the next events' cursors expired and those events were never
    /// deleted. Version 2 (``pruneNeverAhead``) fixes it; this one stays as schema 8 created it.
    static var prune: String { pruneFunction(version: 1) }

    /// `ledger_prune_events_v2(cutoff, batch)` (schema 15): version 1 with no numbered event
    /// counting as a newest sequence of 0, so nothing is deleted and the mark stays.
    static var pruneNeverAhead: String { pruneFunction(version: 2) }

    private static func pruneFunction(version: Int) -> String {
        let newest = version < 2
            ? "(SELECT MAX(x.sequence) FROM ledger_events x WHERE x.sequence IS NOT NULL) - 1"
            : "(SELECT COALESCE(MAX(x.sequence), 0) FROM ledger_events x WHERE x.sequence IS NOT NULL) - 1"
        return """
        CREATE OR REPLACE FUNCTION ledger_prune_events_v\(version)(cutoff bigint, batch integer)
        RETURNS TABLE (deleted bigint, through bigint) LANGUAGE plpgsql SET enable_seqscan = off SET jit = off AS $fn$
        DECLARE
            pruned bigint;
            bound bigint;
            young bigint;
            n bigint;
        BEGIN
            SELECT h.pruned_through INTO pruned FROM ledger_event_head h WHERE h.singleton FOR UPDATE;
            SELECT LEAST(
                \(newest),
                pruned + batch,
                (SELECT MIN(c.sequence) FROM ledger_webhook_cursors c),
                (SELECT MIN(d.sequence) FROM ledger_deliveries d WHERE d.status IN ('pending', 'failed')) - 1
            ) INTO bound;
            SELECT MIN(x.sequence) INTO young FROM ledger_events x
            WHERE x.sequence > pruned AND x.sequence <= bound AND x.recorded_at >= cutoff;
            IF young IS NOT NULL THEN
                bound := young - 1;
            END IF;
            IF bound IS NULL OR bound <= pruned THEN
                RETURN QUERY SELECT 0::bigint, pruned;
                RETURN;
            END IF;
            -- Every status: one redelivered by hand since the check above goes too, rather than
            -- stay pending for an event that is gone (it would block its account's later ones).
            DELETE FROM ledger_deliveries d WHERE d.status IN ('pending', 'delivered', 'failed') AND d.sequence > pruned AND d.sequence <= bound;
            DELETE FROM ledger_events x WHERE x.sequence > pruned AND x.sequence <= bound;
            GET DIAGNOSTICS n = ROW_COUNT;
            UPDATE ledger_event_head SET pruned_through = bound WHERE singleton;
            RETURN QUERY SELECT n, bound;
        END;
        $fn$
        """
    }

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
            -- The account's lock before any write: its changes get transaction ids in commit order.
            PERFORM pg_advisory_xact_lock(\(accountLockClass), hashtext($1));
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
                INSERT INTO ledger_events (id, account_id, type, recorded_at, payload)
                VALUES ($6, $1, 'consumable.consumed', $7, jsonb_build_object(
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
    /// whether the notification was taken before. Schema 6's; ``loadWithMoney`` is the one
    /// read since schema 14.
    static var load: String { loadFunction(version: 2) }

    /// `ledger_load_v3(…)` (schema 14): version 2 with the transactions' money columns.
    static var loadWithMoney: String { loadFunction(version: 3) }

    private static func loadFunction(version: Int) -> String {
        """
        CREATE OR REPLACE FUNCTION ledger_load_v\(version)(text[], text[], text[], text[], text)
        RETURNS TABLE (\(PostgresFunctions.shapeColumns(money: version >= 3))) LANGUAGE plpgsql STABLE \(PostgresFunctions.settings) AS $fn$
        BEGIN
            RETURN QUERY \(loadStatement(money: version >= 3));
        END;
        $fn$
        """
    }

    static func loadStatement(money: Bool) -> String { [
        PostgresLedger.shaped("f", [
            0: "f.environment", 2: "f.original_transaction_id", 3: "f.account_id", 10: "f.next_transition_at", 21: "f.revision",
        ], money: money) + """
             FROM unnest($1::text[], $2::text[]) AS k(environment, original_transaction_id)
            JOIN LATERAL (SELECT * FROM ledger_families f1
                WHERE f1.environment = k.environment AND f1.original_transaction_id = k.original_transaction_id) f ON true
            """,
        PostgresLedger.shaped("t", PostgresLedger.transactionShape(money: money), money: money) + """
             FROM unnest($3::text[], $4::text[]) AS k(environment, transaction_id)
            JOIN LATERAL (SELECT * FROM ledger_transactions t1
                WHERE t1.environment = k.environment AND t1.transaction_id = k.transaction_id) t ON true
            """,
        PostgresLedger.shaped("t", PostgresLedger.transactionShape(money: money), money: money) + """
             FROM unnest($1::text[], $2::text[]) AS k(environment, original_transaction_id)
            JOIN LATERAL (SELECT * FROM ledger_transactions t1
                WHERE t1.environment = k.environment AND t1.original_transaction_id = k.original_transaction_id) t ON true
            """,
        PostgresLedger.shaped("r", PostgresLedger.renewalShape, money: money) + """
             FROM unnest($1::text[], $2::text[]) AS k(environment, original_transaction_id)
            JOIN LATERAL (SELECT * FROM ledger_renewals r1
                WHERE r1.environment = k.environment AND r1.original_transaction_id = k.original_transaction_id) r ON true
            """,
        PostgresLedger.shaped("n", [1: "n.notification_uuid"], money: money) + " FROM ledger_notifications n WHERE n.notification_uuid = $5",
    ].joined(separator: "\nUNION ALL\n") }
}

enum LoadWithEventsSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_load_v3"
    static let sql = "SELECT * FROM ledger_load_v3($1, $2, $3, $4, $5)"
}

enum ApplyWithEventsSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_apply_v7"
    static let sql = "SELECT ledger_apply_v7($1::jsonb, $2::bytea, $3::text[], $4::text[], $5::text[], $6::boolean[], $7::bytea)"
}

/// Version 6, which adds the plan's rollup changes itself: for a plan with none to queue, or
/// when ``LedgerConfiguration/queuesRollupChanges`` is off.
enum ApplyAddingRollupsSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_apply_v6"
    static let sql = "SELECT ledger_apply_v6($1::jsonb, $2::bytea, $3::text[], $4::text[], $5::text[], $6::boolean[])"
}

enum ConsumeWithEventSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_consume_v2"
    static let sql = "SELECT * FROM ledger_consume_v2($1, $2, $3, $4, $5, $6, $7)"
}

enum SnapshotXmaxSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_snapshot_xmax_v2"
    static let sql = "SELECT pg_snapshot_xmax(pg_current_snapshot())::text"
}

enum SequenceUntilSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_sequence_until_v2"
    static let sql = "SELECT ledger_sequence_until_v2($1::text::xid8)"
}

enum EventsSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_events_v4"
    static let sql = "SELECT * FROM ledger_events_after_v4($1, $2::integer)"
}

enum PruneEventsSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_prune_events_v2"
    static let sql = "SELECT * FROM ledger_prune_events_v2($1, $2::integer)"
}

// MARK: The console's reads

enum TimelineSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_timeline_v4"
    static let sql = """
        SELECT sequence, payload::text FROM ledger_events
        WHERE account_id = $1 AND sequence < $2 AND sequence IS NOT NULL ORDER BY sequence DESC LIMIT $3
        """
}

enum SearchSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_search_v5"
    static var sql: String {
        let environments = BrowsingQuery.environments.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        let select = "SELECT \(PostgresLedger.transactionSelect) FROM ledger_transactions WHERE"
        return """
            SELECT * FROM (
                \(select) environment IN (\(environments)) AND transaction_id = $1
                UNION \(select) original_transaction_id = $1 AND environment IN (\(environments))
                UNION \(select) web_order_line_item_id = $1
                UNION \(select) app_account_token = $2
            ) AS found ORDER BY purchase_date DESC, transaction_id DESC LIMIT $3
            """
    }
}
