import StoreGateCore
import StoreGateLedger
import FoundationEssentials

/// Writes a ``LedgerWritePlan`` as the JSON document `ledger_apply_v7` takes, with Core's
/// ``JSONWriter`` (Foundation's encoder costs more than the database call on this path).
///
/// The sealed proof is not in the document: it goes as a binary parameter of its own, and
/// the events as parameters of their own too (``eventParameters(_:)``).
///
/// The function reads members with `->>`, so what matters is each value's type: strings
/// escaped per RFC 8259, bytes as hexadecimal strings, dates as integer milliseconds, booleans
/// as `true`/`false`, and absent values as `null`. `proof` and `notification` are left out
/// when the plan has none (the function tests `plan->'proof' IS NOT NULL`), and so is every
/// empty list (the function tests `plan ? 'name'`: a statement it does not run costs
/// nothing, and most plans fill three or four of the eleven lists).
enum PostgresPlanJSON {
    /// The document for `plan`, with the revisions of the transactions it read and the
    /// unowned families whose owner it relied on.
    static func encode(
        _ plan: LedgerWritePlan, revisions: [TransactionKey: Int64], familyRevisions: [FamilyKey: Int64],
        unownedFamilies: [FamilyKey], now: Int64
    ) -> String {
        var json = JSONWriter(capacity: 1024 + plan.events.count * 512)
        json.object { json in
            json.member("now", now)
            Self.list("family_revisions", familyRevisions.sorted { $0.key < $1.key }, to: &json) { json, entry in
                json.object { json in
                    json.member("environment", entry.key.environment.rawValue)
                    json.member("original_transaction_id", entry.key.originalTransactionId)
                    json.member("revision", entry.value)
                }
            }
            if let proof = plan.proof {
                json.key("proof")
                json.object { json in
                    json.member("digest", hex: proof.digest.bytes)
                    json.member("kind", proof.kind.rawValue)
                    json.member("environment", proof.environment.rawValue)
                    json.nullableMember("key_id", proof.sealed?.keyID)
                    json.member("received_at", proof.receivedAt.ledgerMilliseconds)
                }
            }
            if let notification = plan.notification {
                let summary = notification.summary
                json.key("notification")
                json.object { json in
                    json.member("notification_uuid", summary.notificationUUID)
                    json.member("environment", summary.environment.rawValue)
                    json.member("notification_type", summary.notificationType)
                    json.nullableMember("subtype", summary.subtype)
                    json.member("signed_date", summary.signedDate.ledgerMilliseconds)
                    json.nullableMember("transaction_id", summary.transactionId)
                    json.nullableMember("original_transaction_id", summary.originalTransactionId)
                    json.member("proof_digest", hex: notification.proofDigest.bytes)
                }
            }
            Self.list("unowned_families", unownedFamilies, to: &json) { json, key in Self.family(key, account: nil, to: &json) }
            Self.list("family_inserts", plan.familyInserts, to: &json) { json, family in
                Self.family(family.key, account: family.account, to: &json) { json in
                    json.nullableMember("next_transition_at", family.nextTransitionAt?.ledgerMilliseconds)
                }
            }
            Self.list("next_transitions", plan.nextTransitions, to: &json) { json, transition in
                Self.family(transition.key, account: nil, to: &json) { json in
                    json.nullableMember("at", transition.at?.ledgerMilliseconds)
                }
            }
            Self.list("family_claims", plan.familyClaims, to: &json) { json, family in Self.family(family.key, account: family.account, to: &json) }
            Self.list("transfers", plan.transfers, to: &json) { json, transfer in
                json.object { json in
                    json.member("id", transfer.id)
                    json.member("environment", transfer.key.environment.rawValue)
                    json.member("original_transaction_id", transfer.key.originalTransactionId)
                    json.member("from_account", transfer.from.rawValue)
                    json.member("to_account", transfer.to.rawValue)
                    json.member("transferred_at", transfer.transferredAt.ledgerMilliseconds)
                    json.member("source", transfer.source)
                    json.nullableMember("actor", transfer.actor)
                    json.nullableMember("reason", transfer.reason)
                    json.nullableMember("product_id", transfer.consumableProductId)
                    json.member("units", transfer.consumableUnits)
                    json.member("refunded_units", transfer.refundedUnits)
                }
            }
            Self.list("transaction_inserts", plan.transactionInserts, to: &json) { json, row in Self.transaction(row, revision: nil, to: &json) }
            Self.list("transaction_updates", plan.transactionUpdates, to: &json) { json, row in Self.transaction(row, revision: revisions[row.key] ?? -1, to: &json) }
            Self.list("renewals", plan.renewals, to: &json) { json, row in Self.renewal(row, to: &json) }
            Self.list("balance_deltas", plan.balanceDeltas, to: &json) { json, delta in
                json.object { json in
                    json.member("account_id", delta.key.account.rawValue)
                    json.member("product_id", delta.key.productId)
                    json.member("purchased", delta.purchased)
                    json.member("refunded", delta.refunded)
                }
            }
            Self.list("rollup_deltas", plan.rollupDeltas, to: &json) { json, rollup in
                json.object { json in
                    json.member("measure", rollup.key.measure.rawValue)
                    json.member("environment", rollup.key.environment.rawValue)
                    json.member("day", rollup.key.day)
                    json.member("product_id", rollup.key.productId)
                    json.member("subscription_group", rollup.key.subscriptionGroup)
                    json.member("storefront", rollup.key.storefront)
                    json.member("currency", rollup.key.currency)
                    json.member("offer", rollup.key.offer)
                    json.member("count", rollup.value.count)
                    json.member("amount", rollup.value.amount)
                }
            }
            // The events go beside the document (``eventParameters(_:)``); the one account whose
            // lock the function takes, when they have one, goes in it.
            if let account = plan.events.first?.account, plan.events.allSatisfy({ $0.account == account }) {
                json.member("event_account", account.rawValue)
            }
        }
        return json.text
    }

    /// Four parameters of `ledger_apply_v7` (and v6, v5, v4): the events' stored JSON (an event whose
    /// balance the store states without the end of its entitlement, which the function
    /// appends), accounts, products, and which events those are; four `NULL`s for no events.
    static func eventParameters(_ events: [LedgerEvent]) -> [PostgresValue] {
        guard !events.isEmpty else { return [.null, .null, .null, .null] }
        return [
            .texts(events.map { String(decoding: $0.storedJSON(leavingBalanceOpen: $0.needsStoredBalance), as: UTF8.self) }),
            .texts(events.map(\.account.rawValue)),
            .texts(events.map(\.productId)),
            .bools(events.map(\.needsStoredBalance)),
        ]
    }

    /// Writes `name` with an array of `items`, or nothing when there are none: the function
    /// skips a list the document does not have (`plan ? 'name'`) without running a statement.
    private static func list<Item>(
        _ name: StaticString, _ items: [Item], to json: inout JSONWriter, _ element: (inout JSONWriter, Item) -> Void
    ) {
        guard !items.isEmpty else { return }
        json.key(name)
        json.array(items, element)
    }

    private static func family(
        _ key: FamilyKey, account: AccountID?, to json: inout JSONWriter, more: (inout JSONWriter) -> Void = { _ in }
    ) {
        json.object { json in
            json.member("environment", key.environment.rawValue)
            json.member("original_transaction_id", key.originalTransactionId)
            json.nullableMember("account_id", account?.rawValue)
            more(&json)
        }
    }

    private static func transaction(_ row: TransactionRow, revision: Int64?, to json: inout JSONWriter) {
        let value = row.value
        json.object { json in
            json.member("environment", value.environment.rawValue)
            json.member("transaction_id", value.transactionId)
            json.member("original_transaction_id", value.originalTransactionId)
            json.nullableMember("account_id", value.account?.rawValue)
            json.member("bundle_id", value.bundleId)
            json.member("product_id", value.productId)
            json.member("product_type", value.productType.rawValue)
            json.member("has_apple_metadata", row.hasAppleMetadata)
            json.member("subscription_group", value.subscriptionGroup)
            json.member("quantity", value.quantity)
            json.member("purchase_date", value.purchaseDate.ledgerMilliseconds)
            json.nullableMember("original_purchase_date", value.originalPurchaseDate?.ledgerMilliseconds)
            json.nullableMember("expires_date", value.expiresDate?.ledgerMilliseconds)
            json.nullableMember("revocation_date", value.revocationDate?.ledgerMilliseconds)
            json.nullableMember("revocation_reason", value.revocationReason.map(Int64.init))
            json.member("is_upgraded", value.isUpgraded)
            json.nullableMember("web_order_line_item_id", value.webOrderLineItemId)
            json.nullableMember("app_account_token", value.appAccountToken?.uuidString)
            json.member("observed_at", value.observedAt.ledgerMilliseconds)
            json.member("source", value.source.rawValue)
            json.nullableMember("proof_digest", hex: value.proofDigest?.bytes)
            json.member("money_known", value.money != nil)
            json.nullableMember("price", value.money?.price)
            json.nullableMember("currency", value.money?.currency)
            json.nullableMember("storefront", value.money?.storefront)
            json.nullableMember("offer_type", value.money?.offerType.map(Int64.init))
            json.nullableMember("offer_identifier", value.money?.offerIdentifier)
            json.nullableMember("offer_period", value.money?.offerPeriod)
            json.nullableMember("offer_discount_type", value.money?.offerDiscountType)
            json.nullableMember("transaction_reason", value.money?.transactionReason)
            if let revision { json.member("revision", revision) }
        }
    }

    private static func renewal(_ renewal: RenewalRow, to json: inout JSONWriter) {
        json.object { json in
            json.member("environment", renewal.key.environment.rawValue)
            json.member("original_transaction_id", renewal.key.originalTransactionId)
            json.member("product_id", renewal.productId)
            json.nullableMember("auto_renew_product_id", renewal.autoRenewProductId)
            json.member("will_auto_renew", renewal.willAutoRenew)
            json.nullableMember("expiration_intent", renewal.expirationIntent.map(Int64.init))
            json.member("is_in_billing_retry_period", renewal.isInBillingRetryPeriod)
            json.nullableMember("grace_period_expires_date", renewal.gracePeriodExpiresDate?.ledgerMilliseconds)
            json.nullableMember("renewal_date", renewal.renewalDate?.ledgerMilliseconds)
            json.member("observed_at", renewal.observedAt.ledgerMilliseconds)
            json.member("tiebreak", renewal.tiebreak)
        }
    }
}
