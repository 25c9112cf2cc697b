import Foundation
import StoreGateCore

/// The stored form of an event: one JSON object per row (dates as milliseconds since 1970),
/// written by Core's writer, read back by Core's strict reader. The sequence is the row's, not
/// the payload's. PostgreSQL's consumption function builds the same object in SQL
/// (`jsonb_build_object`), so the member names here are a schema: never rename one.
extension LedgerEvent {
    /// The stored JSON of this event (without its sequence).
    package var storedJSON: [UInt8] { storedJSON(leavingBalanceOpen: false) }

    /// Whether the event states a consumable balance after the change, which the backend reads
    /// back inside the transaction that made it (``Swift/Array/settleBalances(_:)``).
    package var needsStoredBalance: Bool {
        entitlement?.productType == .consumable && type != .consumableConsumed
    }

    /// The stored JSON, or with `leavingBalanceOpen` (an event that ``needsStoredBalance``) the
    /// same without the entitlement's `isEntitled` and `balance` and without the two closing
    /// braces after them: the entitlement is the object's last member, so PostgreSQL's
    /// `ledger_apply_v7` (as v4 to v6 did) completes the text with the stored counters by
    /// concatenation (``PostgresEvents``), instead of rebuilding a parsed document (4 µs an event).
    package func storedJSON(leavingBalanceOpen: Bool) -> [UInt8] {
        var json = JSONWriter(capacity: 512)
        json.object { json in
            json.member("id", id)
            json.member("type", type.rawValue)
            json.member("account", account.rawValue)
            json.member("productId", productId)
            json.member("environment", environment?.rawValue)
            json.member("transactionId", transactionId)
            json.member("originalTransactionId", originalTransactionId)
            json.member("occurredAt", occurredAt.ledgerMilliseconds)
            json.member("recordedAt", recordedAt.ledgerMilliseconds)
            json.member("source", source)
            json.member("notificationType", notificationType)
            json.member("notificationSubtype", notificationSubtype)
            json.member("notificationUUID", notificationUUID)
            json.member("previousState", previousState?.rawValue)
            json.member("revocationReason", revocationReason)
            json.member("quantity", quantity)
            json.member("idempotencyKey", idempotencyKey)
            json.member("refusal", refusal)
            if let grant {
                json.key("grant")
                json.object { json in
                    json.member("id", grant.id)
                    json.member("entitlement", grant.entitlement)
                    json.member("startsAt", grant.startsAt.ledgerMilliseconds)
                    json.member("expiresAt", grant.expiresAt.ledgerMilliseconds)
                    json.member("reason", grant.reason)
                    json.member("actor", grant.actor)
                }
            }
            if let transfer {
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
            if let change {
                json.key("change")
                json.object { json in
                    json.member("entitlement", change.entitlement)
                    if let before = change.before {
                        json.key("before")
                        Self.write(before, to: &json)
                    }
                    json.key("after")
                    Self.write(change.after, to: &json)
                }
            }
            if let support {
                json.key("support")
                json.object { json in
                    json.member("action", support.action)
                    json.member("reason", support.reason)
                    json.member("actor", support.actor)
                    json.member("days", support.days)
                    json.member("requestIdentifier", support.requestIdentifier)
                    json.member("effectiveDate", support.effectiveDate?.ledgerMilliseconds)
                }
            }
            // The entitlement stays the last member (``storedJSON(leavingBalanceOpen:)``).
            if let entitlement {
                json.key("entitlement")
                json.object { json in
                    json.member("productType", entitlement.productType.rawValue)
                    if !leavingBalanceOpen { json.member("isEntitled", entitlement.isEntitled) }
                    json.member("state", entitlement.state?.rawValue)
                    json.member("productId", entitlement.productId)
                    json.member("expiresDate", entitlement.expiresDate?.ledgerMilliseconds)
                    json.member("willAutoRenew", entitlement.willAutoRenew)
                    json.member("autoRenewProductId", entitlement.autoRenewProductId)
                    if !leavingBalanceOpen, let balance = entitlement.balance {
                        json.key("balance")
                        json.object { json in
                            json.member("purchased", balance.purchased)
                            json.member("refunded", balance.refunded)
                            json.member("consumed", balance.consumed)
                        }
                    }
                }
            }
        }
        guard leavingBalanceOpen else { return json.bytes }
        var bytes = json.bytes
        // The writer closed the entitlement and then the event: `}}` (its productType is
        // always written, so the entitlement is never empty).
        precondition(entitlement != nil && bytes.suffix(2).elementsEqual("}}".utf8), "an event whose balance is stored ends with its entitlement")
        bytes.removeLast(2)
        return bytes
    }

    private static func write(_ item: EntitlementSnapshot.Item, to json: inout JSONWriter) {
        json.object { json in
            json.member("isActive", item.isActive)
            json.member("expiresAt", item.expiresAt?.ledgerMilliseconds)
            json.member("source", item.source?.rawValue)
            json.member("productId", item.productId)
            json.member("grantId", item.grantId)
        }
    }

    private static func item(_ object: JSONObject) throws(LedgerError) -> EntitlementSnapshot.Item {
        var fields = StoredFields(object: object)
        let item = EntitlementSnapshot.Item(
            isActive: fields.bool("isActive") ?? false, expiresAt: fields.date("expiresAt"),
            source: fields.string("source").flatMap(EntitlementSource.Kind.init(rawValue:)), productId: fields.string("productId"),
            grantId: fields.string("grantId")
        )
        try fields.check()
        return item
    }

    /// Reads a stored event.
    ///
    /// - Throws: ``LedgerError/Code/storage`` when the row is not an event this version wrote.
    package init(stored bytes: [UInt8], sequence: Int64) throws(LedgerError) {
        let object: JSONObject
        switch JSONReader.readObject(bytes) {
        case .success(let read): object = read
        case .failure(let failure): throw LedgerError(.storage, reason: "a stored event is not JSON: \(failure.reason)")
        }
        var fields = StoredFields(object: object)
        let entitlement: Entitlement?
        if let nested = fields.object("entitlement") {
            var inner = StoredFields(object: nested)
            var balance: ConsumableBalance?
            if let stored = inner.object("balance") {
                var counters = StoredFields(object: stored)
                balance = ConsumableBalance(
                    productId: "", purchased: counters.int("purchased") ?? 0, refunded: counters.int("refunded") ?? 0,
                    consumed: counters.int("consumed") ?? 0
                )
                try counters.check()
            }
            let productType = ProductType(rawValue: inner.string("productType") ?? "")
            entitlement = Entitlement(
                productType: productType,
                isEntitled: inner.bool("isEntitled") ?? false,
                state: inner.string("state").flatMap(SubscriptionEntitlement.State.init(rawValue:)),
                productId: inner.string("productId"),
                expiresDate: inner.date("expiresDate"),
                willAutoRenew: inner.bool("willAutoRenew"),
                autoRenewProductId: inner.string("autoRenewProductId"),
                balance: balance
            )
            try inner.check()
        } else {
            entitlement = nil
        }
        var grant: Grant?
        if let nested = fields.object("grant") {
            var inner = StoredFields(object: nested)
            grant = Grant(
                id: inner.string("id") ?? "", entitlement: inner.string("entitlement") ?? "",
                startsAt: inner.date("startsAt") ?? Date(ledgerMilliseconds: 0), expiresAt: inner.date("expiresAt") ?? Date(ledgerMilliseconds: 0),
                reason: inner.string("reason") ?? "", actor: inner.string("actor")
            )
            try inner.check()
        }
        var transfer: Transfer?
        if let nested = fields.object("transfer") {
            var inner = StoredFields(object: nested)
            guard let direction = Transfer.Direction(rawValue: inner.string("direction") ?? "") else {
                throw LedgerError(.storage, reason: "a stored transfer event has no direction")
            }
            transfer = Transfer(
                id: inner.string("id") ?? "", direction: direction, from: AccountID(stored: inner.string("from") ?? ""),
                to: AccountID(stored: inner.string("to") ?? ""), actor: inner.string("actor"), reason: inner.string("reason")
            )
            try inner.check()
        }
        var change: Change?
        if let nested = fields.object("change") {
            var inner = StoredFields(object: nested)
            let before = try inner.object("before").map { object throws(LedgerError) in try Self.item(object) }
            let after = try Self.item(inner.object("after") ?? JSONObject(members: []))
            change = Change(entitlement: inner.string("entitlement") ?? "", before: before, after: after)
            try inner.check()
        }
        var support: Support?
        if let nested = fields.object("support") {
            var inner = StoredFields(object: nested)
            support = Support(
                action: inner.string("action") ?? "", reason: inner.string("reason") ?? "", actor: inner.string("actor"), days: inner.int("days"),
                requestIdentifier: inner.string("requestIdentifier"), effectiveDate: inner.date("effectiveDate")
            )
            try inner.check()
        }
        let productId = fields.string("productId") ?? ""
        self.init(
            id: fields.string("id") ?? "",
            sequence: sequence,
            type: EventType(rawValue: fields.string("type") ?? ""),
            account: AccountID(stored: fields.string("account") ?? ""),
            productId: productId,
            environment: fields.string("environment").map(AppStoreEnvironment.init(rawValue:)),
            transactionId: fields.string("transactionId"),
            originalTransactionId: fields.string("originalTransactionId"),
            occurredAt: fields.date("occurredAt") ?? Date(ledgerMilliseconds: 0),
            recordedAt: fields.date("recordedAt") ?? Date(ledgerMilliseconds: 0),
            source: fields.string("source") ?? "",
            notificationType: fields.string("notificationType"),
            notificationSubtype: fields.string("notificationSubtype"),
            notificationUUID: fields.string("notificationUUID"),
            previousState: fields.string("previousState").flatMap(SubscriptionEntitlement.State.init(rawValue:)),
            revocationReason: fields.int("revocationReason"),
            quantity: fields.int("quantity"),
            idempotencyKey: fields.string("idempotencyKey"),
            refusal: fields.string("refusal"),
            entitlement: entitlement.map { value in
                var copy = value
                copy.balance?.productId = productId
                return copy
            },
            grant: grant,
            transfer: transfer,
            change: change,
            support: support
        )
        try fields.check()
        if id.isEmpty || type.rawValue.isEmpty || account.rawValue.isEmpty {
            throw LedgerError(.storage, reason: "a stored event lacks its id, type or account")
        }
    }
}

/// Reads the members of a stored event, remembering the first one of the wrong type.
private struct StoredFields {
    let object: JSONObject
    var problem: String?

    init(object: JSONObject) {
        self.object = object
    }

    mutating func string(_ name: String) -> String? {
        switch object[name] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: problem = problem ?? name; return nil
        }
    }

    mutating func int(_ name: String) -> Int? {
        switch object[name] {
        case nil, .null?: return nil
        case .integer(let value)?: return Int(value)
        default: problem = problem ?? name; return nil
        }
    }

    mutating func bool(_ name: String) -> Bool? {
        switch object[name] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        default: problem = problem ?? name; return nil
        }
    }

    mutating func date(_ name: String) -> Date? {
        int(name).map { Date(ledgerMilliseconds: Int64($0)) }
    }

    mutating func object(_ name: String) -> JSONObject? {
        switch object[name] {
        case nil, .null?: return nil
        case .object(let value)?: return value
        default: problem = problem ?? name; return nil
        }
    }

    func check() throws(LedgerError) {
        if let problem { throw LedgerError(.storage, reason: "a stored event's member '\(problem)' has the wrong type") }
    }
}
