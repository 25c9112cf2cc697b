import StoreGateCore
import StoreGateLedger
import FoundationEssentials

/// Writes a ``LedgerWritePlan`` as the JSON document `ledger_apply_v1` takes.
///
/// Hand-written (Foundation's encoder costs more than the database call on this path):
/// strings escaped per RFC 8259, bytes as hexadecimal, dates as milliseconds, absent values
/// as `null`.
struct PostgresPlanJSON {
    private var text = ""

    /// The document for `plan`, with the revisions of the transactions it read and the
    /// unowned families whose owner it relied on.
    static func encode(_ plan: LedgerWritePlan, revisions: [TransactionKey: Int64], unownedFamilies: [FamilyKey], now: Int64) -> String {
        var json = PostgresPlanJSON()
        json.text.reserveCapacity(1024 + (plan.proof?.sealed?.combined.count ?? 0) * 2)
        json.text += #"{"now":\#(now)"#
        if let proof = plan.proof {
            json.text += #","proof":{"digest":"\#(Hex.encode(proof.digest.bytes))","kind":"#
            json.string(proof.kind.rawValue)
            json.text += #","environment":"#
            json.string(proof.environment.rawValue)
            json.text += #","key_id":"#
            json.string(proof.sealed?.keyID)
            json.text += #","sealed":"#
            json.bytes(proof.sealed?.combined)
            json.text += #","received_at":\#(proof.receivedAt.ledgerMilliseconds)}"#
        }
        if let notification = plan.notification {
            let summary = notification.summary
            json.text += #","notification":{"notification_uuid":"#
            json.string(summary.notificationUUID)
            json.text += #","environment":"#
            json.string(summary.environment.rawValue)
            json.text += #","notification_type":"#
            json.string(summary.notificationType)
            json.text += #","subtype":"#
            json.string(summary.subtype)
            json.text += #","signed_date":\#(summary.signedDate.ledgerMilliseconds),"transaction_id":"#
            json.string(summary.transactionId)
            json.text += #","original_transaction_id":"#
            json.string(summary.originalTransactionId)
            json.text += #","proof_digest":"\#(Hex.encode(notification.proofDigest.bytes))"}"#
        }
        json.array("unowned_families", unownedFamilies) { json, key in json.family(key, account: nil) }
        json.array("family_inserts", plan.familyInserts) { json, family in json.family(family.key, account: family.account) }
        json.array("family_claims", plan.familyClaims) { json, family in json.family(family.key, account: family.account) }
        json.array("transaction_inserts", plan.transactionInserts) { json, row in json.transaction(row, revision: nil) }
        json.array("transaction_updates", plan.transactionUpdates) { json, row in json.transaction(row, revision: revisions[row.key] ?? -1) }
        json.array("renewals", plan.renewals) { json, renewal in json.renewal(renewal) }
        json.array("balance_deltas", plan.balanceDeltas) { json, delta in
            json.text += #"{"account_id":"#
            json.string(delta.key.account.rawValue)
            json.text += #","product_id":"#
            json.string(delta.key.productId)
            json.text += #","purchased":\#(delta.purchased),"refunded":\#(delta.refunded)}"#
        }
        json.text += "}"
        return json.text
    }

    private mutating func array<T>(_ name: String, _ items: [T], _ element: (inout PostgresPlanJSON, T) -> Void) {
        text += #","\#(name)":["#
        for (index, item) in items.enumerated() {
            if index > 0 { text += "," }
            element(&self, item)
        }
        text += "]"
    }

    private mutating func family(_ key: FamilyKey, account: AccountID?) {
        text += #"{"environment":"#
        string(key.environment.rawValue)
        text += #","original_transaction_id":"#
        string(key.originalTransactionId)
        text += #","account_id":"#
        string(account?.rawValue)
        text += "}"
    }

    private mutating func transaction(_ row: TransactionRow, revision: Int64?) {
        let value = row.value
        text += #"{"environment":"#
        string(value.environment.rawValue)
        text += #","transaction_id":"#
        string(value.transactionId)
        text += #","original_transaction_id":"#
        string(value.originalTransactionId)
        text += #","account_id":"#
        string(value.account?.rawValue)
        text += #","bundle_id":"#
        string(value.bundleId)
        text += #","product_id":"#
        string(value.productId)
        text += #","product_type":"#
        string(value.productType.rawValue)
        text += #","has_apple_metadata":\#(row.hasAppleMetadata),"subscription_group":"#
        string(value.subscriptionGroup)
        text += #","quantity":\#(value.quantity),"purchase_date":\#(value.purchaseDate.ledgerMilliseconds)"#
        text += #","original_purchase_date":"#
        number(value.originalPurchaseDate?.ledgerMilliseconds)
        text += #","expires_date":"#
        number(value.expiresDate?.ledgerMilliseconds)
        text += #","revocation_date":"#
        number(value.revocationDate?.ledgerMilliseconds)
        text += #","revocation_reason":"#
        number(value.revocationReason.map(Int64.init))
        text += #","is_upgraded":\#(value.isUpgraded),"web_order_line_item_id":"#
        string(value.webOrderLineItemId)
        text += #","app_account_token":"#
        string(value.appAccountToken?.uuidString)
        text += #","observed_at":\#(value.observedAt.ledgerMilliseconds),"source":"#
        string(value.source.rawValue)
        text += #","proof_digest":"#
        bytes(value.proofDigest?.bytes)
        if let revision { text += #","revision":\#(revision)"# }
        text += "}"
    }

    private mutating func renewal(_ renewal: RenewalRow) {
        text += #"{"environment":"#
        string(renewal.key.environment.rawValue)
        text += #","original_transaction_id":"#
        string(renewal.key.originalTransactionId)
        text += #","product_id":"#
        string(renewal.productId)
        text += #","auto_renew_product_id":"#
        string(renewal.autoRenewProductId)
        text += #","will_auto_renew":\#(renewal.willAutoRenew),"expiration_intent":"#
        number(renewal.expirationIntent.map(Int64.init))
        text += #","is_in_billing_retry_period":\#(renewal.isInBillingRetryPeriod),"grace_period_expires_date":"#
        number(renewal.gracePeriodExpiresDate?.ledgerMilliseconds)
        text += #","renewal_date":"#
        number(renewal.renewalDate?.ledgerMilliseconds)
        text += #","observed_at":\#(renewal.observedAt.ledgerMilliseconds),"tiebreak":"#
        string(renewal.tiebreak)
        text += "}"
    }

    private mutating func number(_ value: Int64?) {
        if let value { text += String(value) } else { text += "null" }
    }

    private mutating func bytes(_ value: [UInt8]?) {
        if let value { text += "\"\(Hex.encode(value))\"" } else { text += "null" }
    }

    /// A JSON string (or `null`), escaping quotes, backslashes and control characters.
    private mutating func string(_ value: String?) {
        guard let value else {
            text += "null"
            return
        }
        text += "\""
        if value.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            text += value
        } else {
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                case "\n": text += "\\n"
                case "\r": text += "\\r"
                case "\t": text += "\\t"
                default:
                    if scalar.value < 0x20 {
                        text += "\\u00" + Hex.encode([UInt8(scalar.value)])
                    } else {
                        text.unicodeScalars.append(scalar)
                    }
                }
            }
        }
        text += "\""
    }
}
