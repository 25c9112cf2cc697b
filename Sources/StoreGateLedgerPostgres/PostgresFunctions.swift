/// The ledger's PL/pgSQL functions, created by the migrations.
///
/// Migrations are history: each version of a function stays here as the migration of its
/// schema created it, and only the latest of each is called (``AccountSQL``,
/// ``ApplyWithEventsSQL``, ``LoadWithEventsSQL``, ``ConsumeWithEventSQL``).
///
/// Every hot statement runs inside one: PL/pgSQL plans each inner statement once per
/// connection, and the functions pin those plans to index lookups
/// (`plan_cache_mode = force_generic_plan`, no sequential scans, no hash or merge joins) —
/// otherwise PostgreSQL re-plans the multi-branch statements on every call (about a
/// millisecond each), or caches a plan chosen while the tables were empty.
///
/// `ledger_apply_v7(…)` (schema 17; every version before it stays as its migration created
/// it), the server-side half of recording, writes a ``LedgerWritePlan`` in one round trip and
/// one implicit transaction, after checking that the rows the plan was computed from have not
/// changed since they were read.
///
/// It holds no business rules (those stay in the shared Swift planner); it only writes rows
/// and enforces the plan's preconditions, raising `serialization_failure` (40001) when one
/// fails so the client reloads, replans and retries:
/// - a family the plan saw without owner and does not claim is still without owner (locked);
/// - a family the plan claims is still without owner, and afterwards none of its transactions is;
/// - a transaction the plan updates still has the revision the plan read;
/// - families, transactions and notifications the plan inserts do not exist yet (primary keys:
///   `unique_violation`, 23505, also retried).
enum PostgresFunctions {
    /// The settings every ledger function runs with.
    static let settings = "SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off"

    /// The columns of the multi-kind rows the read functions return.
    static func shapeColumns(money: Bool) -> String {
        let types = money ? PostgresLedger.shapeTypes : PostgresLedger.shapeTypesV1
        return "kind text, " + types.enumerated().map { "c\($0.offset) \($0.element)" }.joined(separator: ", ")
    }

    /// `ledger_load_v1(family environments, family ids, transaction environments, transaction ids, notification uuid)`
    /// (schema 1; `ledger_load_v3` is today's, ``PostgresEvents/loadWithMoney``).
    static var load: String {
        """
        CREATE OR REPLACE FUNCTION ledger_load_v1(text[], text[], text[], text[], text)
        RETURNS TABLE (\(shapeColumns(money: false))) LANGUAGE plpgsql STABLE \(settings) AS $fn$
        BEGIN
            RETURN QUERY \(PostgresLedger.loadStatement(money: false));
        END;
        $fn$
        """
    }

    /// `ledger_account_v1(account id)` (schema 1): everything about an account.
    static var account: String { accountFunction(version: 1) }

    /// `ledger_account_v2(account id)` (schema 14): version 1 with the money columns.
    static var accountWithMoney: String { accountFunction(version: 2) }

    private static func accountFunction(version: Int) -> String {
        """
        CREATE OR REPLACE FUNCTION ledger_account_v\(version)(text)
        RETURNS TABLE (\(shapeColumns(money: version >= 2))) LANGUAGE plpgsql STABLE \(settings) AS $fn$
        BEGIN
            RETURN QUERY \(PostgresLedger.accountStatement(money: version >= 2));
        END;
        $fn$
        """
    }

    /// `ledger_consume_v1(account, product, quantity, idempotency key, consumed at)` (schema 1;
    /// `ledger_consume_v2` is today's, ``PostgresEvents/consume``).
    static var consume: String {
        """
        CREATE OR REPLACE FUNCTION ledger_consume_v1(text, text, bigint, text, bigint)
        RETURNS TABLE (kind text, product_id text, quantity bigint, consumed_at bigint, remaining bigint)
        LANGUAGE plpgsql \(settings) AS $fn$
        #variable_conflict use_column
        BEGIN
            RETURN QUERY \(PostgresLedger.consumeStatement);
        END;
        $fn$
        """
    }

    /// `ledger_apply_v1(plan jsonb)` (schema 1; writes no events).
    static var apply: String { applyFunction(version: 1) }

    /// `ledger_apply_v2(plan jsonb)`: version 1, and first the locks of the accounts the plan
    /// has events for and the family revisions the plan read (every touched family's revision
    /// is bumped, so a plan computed from a family that changed since is retried), and last the
    /// plan's events, each consumable event with the balance stored after the change, for the
    /// sequencer to number (``PostgresEvents``).
    static var applyWithEvents: String { applyFunction(version: 2) }

    /// `ledger_apply_v3(plan jsonb, sealed_proof bytea)` (schema 7): version 2, with the sealed
    /// proof as a binary parameter instead of hexadecimal inside the document (parsing and
    /// decoding those 4 KB took about 10 µs of the server's time per purchase), running only the
    /// loops of the lists the document has (``PostgresPlanJSON`` leaves empty ones out: a loop
    /// over nothing still started a statement), and locking a plan's one account with an
    /// expression instead of a query.
    static var applyLean: String { applyFunction(version: 3) }

    /// `ledger_apply_v4(plan jsonb, sealed_proof bytea, event_payloads text[], event_accounts
    /// text[], event_products text[], event_balanced boolean[])` (schema 8): version 3, with the
    /// events beside the document as their stored text, a consumable's balance appended to the
    /// text (``PostgresEvents/appendFromArrays``).
    static var applyWithEventArrays: String { applyFunction(version: 4) }

    /// `ledger_apply_v5(…)` (schema 12): version 4's parameters and writes, and the plan's
    /// `transfers` — purchase families moving between accounts. Each changes its family's owner
    /// from the account it leaves (refusing, 40001, a family that account no longer owns),
    /// before the transactions' updates; then, after the balance deltas, moves the consumed
    /// units that leave with a consumable (``PostgresFunctions/moveConsumedUnits``) and stores
    /// the move's row. Both accounts' event locks are taken first, as for every plan with
    /// events on several accounts, so a consumption of the old owner waits for the move.
    static var applyWithTransfers: String { applyFunction(version: 5) }

    /// The PL/pgSQL of one transfer (`r`) after the balance deltas: the old owner's consumed
    /// units its remaining purchases no longer cover, at most the units that left
    /// (`TransferRow.consumedUnitsMoving`), go from its balance to the new owner's; then the
    /// move's row, with that number.
    static let moveConsumedUnits = """
        moved_units := 0;
                IF (r->>'units')::bigint > 0 THEN
                    SELECT b.purchased, b.refunded, b.consumed INTO balance FROM ledger_balances b
                    WHERE b.account_id = r->>'from_account' AND b.product_id = r->>'product_id' FOR UPDATE;
                    IF FOUND THEN
                        moved_units := GREATEST(0, LEAST((r->>'units')::bigint, balance.consumed - balance.purchased));
                    END IF;
                    IF moved_units > 0 THEN
                        UPDATE ledger_balances SET consumed = consumed - moved_units
                        WHERE account_id = r->>'from_account' AND product_id = r->>'product_id';
                        INSERT INTO ledger_balances (account_id, product_id, purchased, refunded, consumed)
                        VALUES (r->>'to_account', r->>'product_id', 0, 0, moved_units)
                        ON CONFLICT (account_id, product_id) DO UPDATE SET consumed = ledger_balances.consumed + moved_units;
                    END IF;
                END IF;
                INSERT INTO ledger_transfers (id, environment, original_transaction_id, from_account, to_account, transferred_at, source,
                    actor, reason, product_id, units, refunded_units, consumed_moved)
                VALUES (r->>'id', r->>'environment', r->>'original_transaction_id', r->>'from_account', r->>'to_account',
                    (r->>'transferred_at')::bigint, r->>'source', r->>'actor', r->>'reason', r->>'product_id', (r->>'units')::bigint,
                    (r->>'refunded_units')::bigint, moved_units);
        """

    /// `ledger_apply_v6(…)` (schema 14): version 5's parameters and writes (transfers included),
    /// also writing the transactions' money columns and adding the plan's `rollup_deltas` to the
    /// daily analytics rollups (``FamilyRollup``) in the same transaction.
    static var applyWithMoney: String { applyFunction(version: 6) }

    /// `ledger_apply_v7(…, rollup_changes bytea)` (schema 17): version 6, except that the
    /// plan's rollup changes arrive encoded (``RollupChanges``) and are queued in
    /// `ledger_rollup_changes` as one row, for a fold to add (``PostgresLedger/foldRollupChanges(limit:)``).
    static var applyQueueingRollups: String { applyFunction(version: 7) }

    /// The loop of `body` over the plan's list `name` (`r` each element). From version 3 the
    /// loop runs only when the document has the list (``PostgresPlanJSON`` leaves empty ones
    /// out): a loop over nothing still started a statement, and most plans fill three or four
    /// of the eleven lists.
    private static func each(_ name: String, _ version: Int, _ body: String) -> String {
        let loop = "FOR r IN SELECT value FROM jsonb_array_elements(plan->'\(name)') LOOP\n\(body)\n    END LOOP;"
        return version < 3 ? loop : "IF plan ? '\(name)' THEN\n    \(loop)\n    END IF;"
    }

    private static func applyFunction(version: Int) -> String {
        let locks = version < 3 ? PostgresEvents.lockAccountsOfPlan
            : version < 4 ? PostgresEvents.lockAccountOrAccountsOfPlan : PostgresEvents.lockAccountOrAccountsOfEvents
        let families = version < 2 ? "" : """
            \(locks)
            \(each("family_revisions", version, """
                UPDATE ledger_families SET revision = revision + 1
                WHERE environment = r->>'environment' AND original_transaction_id = r->>'original_transaction_id'
                  AND revision = (r->>'revision')::bigint;
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'ledger: a purchase family changed concurrently' USING ERRCODE = 'serialization_failure';
                END IF;
                """))

        """
        let events = version < 2 ? "" : """
            \(version < 4 ? PostgresEvents.appendFromPlan(guarded: version >= 3) : PostgresEvents.appendFromArrays)

        """
        let parameters = version < 3 ? "plan jsonb"
            : version < 4 ? "plan jsonb, sealed_proof bytea"
            : version < 7 ? "plan jsonb, sealed_proof bytea, event_payloads text[], event_accounts text[], event_products text[], event_balanced boolean[]"
            : "plan jsonb, sealed_proof bytea, event_payloads text[], event_accounts text[], event_products text[], event_balanced boolean[], rollup_changes bytea"
        let moneyInsertColumns = version < 6 ? "" : ",\n            \(PostgresLedger.moneyColumns)"
        let moneyInsertValues = version < 6 ? "" : """
            ,
                        (r->>'money_known')::boolean, (r->>'price')::bigint, r->>'currency', r->>'storefront',
                        (r->>'offer_type')::bigint, r->>'offer_identifier', r->>'offer_period', r->>'offer_discount_type',
                        r->>'transaction_reason'
            """
        let moneyUpdates = version < 6 ? "" : """

                        money_known = (r->>'money_known')::boolean, price = (r->>'price')::bigint, currency = r->>'currency',
                        storefront = r->>'storefront', offer_type = (r->>'offer_type')::bigint,
                        offer_identifier = r->>'offer_identifier', offer_period = r->>'offer_period',
                        offer_discount_type = r->>'offer_discount_type', transaction_reason = r->>'transaction_reason',
            """
        let variables = version < 2 ? "" : version < 4 ? "\n    balance record;"
            : version < 5 ? "\n    balance record;\n    event_text text;" : "\n    balance record;\n    event_text text;\n    moved_units bigint;"
        return """
        CREATE OR REPLACE FUNCTION ledger_apply_v\(version)(\(parameters)) RETURNS void LANGUAGE plpgsql \(settings) AS $fn$
        DECLARE
            r jsonb;
            now_ms bigint := (plan->>'now')::bigint;\(variables)
        BEGIN
        \(families)    IF plan->'proof' IS NOT NULL THEN
                r := plan->'proof';
                INSERT INTO ledger_proofs (digest, kind, environment, key_id, sealed, received_at)
                VALUES (decode(r->>'digest', 'hex'), r->>'kind', r->>'environment', r->>'key_id',
                        \(version < 3 ? "decode(r->>'sealed', 'hex')" : "sealed_proof"), (r->>'received_at')::bigint)
                ON CONFLICT (digest) DO NOTHING;
            END IF;
            IF plan->'notification' IS NOT NULL THEN
                r := plan->'notification';
                INSERT INTO ledger_notifications (notification_uuid, environment, notification_type, subtype, signed_date,
                    transaction_id, original_transaction_id, proof_digest, received_at)
                VALUES (r->>'notification_uuid', r->>'environment', r->>'notification_type', r->>'subtype',
                        (r->>'signed_date')::bigint, r->>'transaction_id', r->>'original_transaction_id',
                        decode(r->>'proof_digest', 'hex'), now_ms);
            END IF;
            \(each("unowned_families", version, """
                PERFORM 1 FROM ledger_families
                WHERE environment = r->>'environment' AND original_transaction_id = r->>'original_transaction_id'
                  AND COALESCE(account_id, '') = ''
                FOR UPDATE;
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'ledger: a purchase family was claimed concurrently' USING ERRCODE = 'serialization_failure';
                END IF;
                """))
            \(each("family_inserts", version, """
                INSERT INTO ledger_families (environment, original_transaction_id, account_id\(version < 2 ? "" : ", next_transition_at"))
                VALUES (r->>'environment', r->>'original_transaction_id', r->>'account_id'\(version < 2 ? "" : ", (r->>'next_transition_at')::bigint"));
                """))
            \(version < 2 ? "" : each("next_transitions", version, """
                UPDATE ledger_families SET next_transition_at = (r->>'at')::bigint
                WHERE environment = r->>'environment' AND original_transaction_id = r->>'original_transaction_id';
                """))
            \(each("family_claims", version, """
                UPDATE ledger_families SET account_id = r->>'account_id'
                WHERE environment = r->>'environment' AND original_transaction_id = r->>'original_transaction_id'
                  AND COALESCE(account_id, '') = '';
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'ledger: a purchase family was claimed concurrently' USING ERRCODE = 'serialization_failure';
                END IF;
                """))
            \(version < 5 ? "" : each("transfers", version, """
                UPDATE ledger_families SET account_id = r->>'to_account'
                WHERE environment = r->>'environment' AND original_transaction_id = r->>'original_transaction_id'
                  AND account_id = r->>'from_account';
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'ledger: a purchase family moved concurrently' USING ERRCODE = 'serialization_failure';
                END IF;
                """))
            \(each("transaction_inserts", version, """
                INSERT INTO ledger_transactions (environment, transaction_id, original_transaction_id, account_id, bundle_id,
                    product_id, product_type, has_apple_metadata, subscription_group, quantity, purchase_date,
                    original_purchase_date, expires_date, revocation_date, revocation_reason, is_upgraded,
                    web_order_line_item_id, app_account_token, observed_at, source, proof_digest, revision, recorded_at, updated_at\(moneyInsertColumns))
                VALUES (r->>'environment', r->>'transaction_id', r->>'original_transaction_id', r->>'account_id', r->>'bundle_id',
                    r->>'product_id', r->>'product_type', (r->>'has_apple_metadata')::boolean, r->>'subscription_group',
                    (r->>'quantity')::bigint, (r->>'purchase_date')::bigint, (r->>'original_purchase_date')::bigint,
                    (r->>'expires_date')::bigint, (r->>'revocation_date')::bigint, (r->>'revocation_reason')::bigint,
                    (r->>'is_upgraded')::boolean, r->>'web_order_line_item_id', r->>'app_account_token',
                    (r->>'observed_at')::bigint, r->>'source', decode(r->>'proof_digest', 'hex'), 0, now_ms, now_ms\(moneyInsertValues));
                """))
            \(each("transaction_updates", version, """
                UPDATE ledger_transactions SET
                    account_id = r->>'account_id', product_type = r->>'product_type',
                    has_apple_metadata = (r->>'has_apple_metadata')::boolean, subscription_group = r->>'subscription_group',
                    original_purchase_date = (r->>'original_purchase_date')::bigint, expires_date = (r->>'expires_date')::bigint,
                    revocation_date = (r->>'revocation_date')::bigint, revocation_reason = (r->>'revocation_reason')::bigint,
                    is_upgraded = (r->>'is_upgraded')::boolean, web_order_line_item_id = r->>'web_order_line_item_id',
                    app_account_token = r->>'app_account_token', observed_at = (r->>'observed_at')::bigint,
                    source = r->>'source', proof_digest = decode(r->>'proof_digest', 'hex'),\(moneyUpdates)
                    revision = revision + 1, updated_at = now_ms
                WHERE environment = r->>'environment' AND transaction_id = r->>'transaction_id'
                  AND revision = (r->>'revision')::bigint;
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'ledger: a transaction changed concurrently' USING ERRCODE = 'serialization_failure';
                END IF;
                """))
            \(each("family_claims", version, """
                PERFORM 1 FROM ledger_transactions
                WHERE environment = r->>'environment' AND original_transaction_id = r->>'original_transaction_id'
                  AND COALESCE(account_id, '') = '';
                IF FOUND THEN
                    RAISE EXCEPTION 'ledger: a claimed family gained a transaction concurrently' USING ERRCODE = 'serialization_failure';
                END IF;
                """))
            \(each("renewals", version, """
                INSERT INTO ledger_renewals (environment, original_transaction_id, product_id, auto_renew_product_id,
                    will_auto_renew, expiration_intent, is_in_billing_retry_period, grace_period_expires_date, renewal_date,
                    observed_at, tiebreak)
                VALUES (r->>'environment', r->>'original_transaction_id', r->>'product_id', r->>'auto_renew_product_id',
                    (r->>'will_auto_renew')::boolean, (r->>'expiration_intent')::bigint,
                    (r->>'is_in_billing_retry_period')::boolean, (r->>'grace_period_expires_date')::bigint,
                    (r->>'renewal_date')::bigint, (r->>'observed_at')::bigint, r->>'tiebreak')
                ON CONFLICT (environment, original_transaction_id) DO UPDATE SET
                    product_id = excluded.product_id, auto_renew_product_id = excluded.auto_renew_product_id,
                    will_auto_renew = excluded.will_auto_renew, expiration_intent = excluded.expiration_intent,
                    is_in_billing_retry_period = excluded.is_in_billing_retry_period,
                    grace_period_expires_date = excluded.grace_period_expires_date, renewal_date = excluded.renewal_date,
                    observed_at = excluded.observed_at, tiebreak = excluded.tiebreak
                WHERE (excluded.observed_at, excluded.tiebreak COLLATE "C")
                    > (ledger_renewals.observed_at, ledger_renewals.tiebreak COLLATE "C");
                """))
            \(version < 7 ? "" : """
                IF rollup_changes IS NOT NULL THEN
                    INSERT INTO ledger_rollup_changes (deltas) VALUES (rollup_changes);
                END IF;
                """)
            \(version < 6 || version >= 7 ? "" : each("rollup_deltas", version, """
                INSERT INTO ledger_rollups (measure, environment, day, product_id, subscription_group, storefront, currency, offer, count, amount)
                VALUES (r->>'measure', r->>'environment', (r->>'day')::bigint, r->>'product_id', r->>'subscription_group',
                        r->>'storefront', r->>'currency', r->>'offer', (r->>'count')::bigint, (r->>'amount')::bigint)
                ON CONFLICT (measure, environment, day, product_id, subscription_group, storefront, currency, offer) DO UPDATE SET
                    count = ledger_rollups.count + excluded.count, amount = ledger_rollups.amount + excluded.amount;
                """))
            -- CHECK constraints see the proposed row before ON CONFLICT: a negative delta (a
            -- refund) stays out of VALUES; it only ever meets an existing row.
            \(each("balance_deltas", version, """
                INSERT INTO ledger_balances (account_id, product_id, purchased, refunded, consumed)
                VALUES (r->>'account_id', r->>'product_id', GREATEST((r->>'purchased')::bigint, 0),
                        GREATEST((r->>'refunded')::bigint, 0), 0)
                ON CONFLICT (account_id, product_id) DO UPDATE SET
                    purchased = ledger_balances.purchased + (r->>'purchased')::bigint,
                    refunded = ledger_balances.refunded + (r->>'refunded')::bigint;
                """))
            \(version < 5 ? "" : each("transfers", version, moveConsumedUnits))
        \(events)END;
        $fn$
        """
    }
}
