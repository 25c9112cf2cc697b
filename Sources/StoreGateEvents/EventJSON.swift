public import StoreGateLedger
import StoreGateCore

/// The wire form of a ``LedgerEvent``: the body of a webhook delivery and an element of
/// `GET /v1/events` (`Event` in the OpenAPI document). A stable mapping: member names and
/// meanings never change within `v1`; new members may appear.
///
/// Dates are RFC 3339 in UTC with milliseconds; absent values are left out.
public enum EventJSON {
    /// The JSON object of one event.
    public static func encode(_ event: LedgerEvent) -> [UInt8] {
        var json = JSONWriter(capacity: 768)
        write(event, to: &json)
        return json.bytes
    }

    static func write(_ item: EntitlementSnapshot.Item, to json: inout JSONWriter) {
        json.object { json in
            json.member("isActive", item.isActive)
            json.member("expiresAt", item.expiresAt)
            json.member("source", item.source?.rawValue)
            json.member("productId", item.productId)
            json.member("grantId", item.grantId)
        }
    }

    static func write(_ event: LedgerEvent, to json: inout JSONWriter) {
        json.object { json in
            json.member("id", event.id)
            json.member("sequence", event.sequence)
            json.member("type", event.type.rawValue)
            json.member("account", event.account.rawValue)
            json.member("productId", event.productId)
            json.member("environment", event.environment?.rawValue)
            json.member("transactionId", event.transactionId)
            json.member("originalTransactionId", event.originalTransactionId)
            json.member("occurredAt", event.occurredAt)
            json.member("recordedAt", event.recordedAt)
            json.member("source", event.source)
            json.member("notificationType", event.notificationType)
            json.member("notificationSubtype", event.notificationSubtype)
            json.member("notificationUUID", event.notificationUUID)
            json.member("previousState", event.previousState?.rawValue)
            json.member("revocationReason", event.revocationReason)
            json.member("quantity", event.quantity)
            json.member("idempotencyKey", event.idempotencyKey)
            json.member("refusal", event.refusal)
            if let grant = event.grant {
                json.key("grant")
                json.object { json in
                    json.member("id", grant.id)
                    json.member("entitlement", grant.entitlement)
                    json.member("startsAt", grant.startsAt)
                    json.member("expiresAt", grant.expiresAt)
                    json.member("reason", grant.reason)
                    json.member("actor", grant.actor)
                }
            }
            if let transfer = event.transfer {
                json.key("transfer")
                json.object { json in
                    json.member("id", transfer.id)
                    json.member("direction", transfer.direction.rawValue)
                    json.member("from", transfer.from.rawValue)
                    json.member("to", transfer.to.rawValue)
                    json.member("actor", transfer.actor)
                    json.member("reason", transfer.reason)
                }
            }
            if let change = event.change {
                json.key("change")
                json.object { json in
                    json.member("entitlement", change.entitlement)
                    if let before = change.before {
                        json.key("before")
                        write(before, to: &json)
                    }
                    json.key("after")
                    write(change.after, to: &json)
                }
            }
            if let support = event.support {
                json.key("support")
                json.object { json in
                    json.member("action", support.action)
                    json.member("reason", support.reason)
                    json.member("actor", support.actor)
                    json.member("days", support.days)
                    json.member("requestIdentifier", support.requestIdentifier)
                    json.member("effectiveDate", support.effectiveDate)
                }
            }
            if let entitlement = event.entitlement {
                json.key("entitlement")
                json.object { json in
                    json.member("productType", entitlement.productType.rawValue)
                    json.member("isEntitled", entitlement.isEntitled)
                    json.member("state", entitlement.state?.rawValue)
                    json.member("productId", entitlement.productId)
                    json.member("expiresDate", entitlement.expiresDate)
                    json.member("willAutoRenew", entitlement.willAutoRenew)
                    json.member("autoRenewProductId", entitlement.autoRenewProductId)
                    if let balance = entitlement.balance {
                        json.key("balance")
                        json.object { json in
                            json.member("purchased", balance.purchased)
                            json.member("refunded", balance.refunded)
                            json.member("consumed", balance.consumed)
                            json.member("available", balance.available)
                            json.member("refundDebt", balance.refundDebt)
                        }
                    }
                }
            }
        }
    }

    /// A page of `GET /v1/events`: the events and the cursor to pass as `after` next (the
    /// last event's sequence, or `after` itself when the page is empty).
    public static func page(_ events: [LedgerEvent], after: Int64) -> [UInt8] {
        var json = JSONWriter(capacity: 256 + events.count * 768)
        json.object { json in
            json.key("events")
            json.array(events) { json, event in write(event, to: &json) }
            json.member("cursor", events.last?.sequence ?? after)
        }
        return json.bytes
    }
}
