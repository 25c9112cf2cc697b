import Foundation
import Mustache
import StoreGateCore
import StoreGateLedger

/// What the console's templates render: plain values, already worded. Mustache escapes every
/// `{{value}}`; the only unescaped insert is a chart's SVG, built here from numbers and
/// escaped labels.
enum ConsoleViews {
    // MARK: Formatting

    static func time(_ date: Date?) -> String {
        guard let date else { return "—" }
        return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false))
    }

    static func day(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle().year().month().day())
    }

    /// The first and last characters of a long identifier or digest, never the whole: enough
    /// to recognise it, not to replay it.
    static func abbreviated(_ text: String, keep: Int = 8) -> String {
        guard text.count > keep * 2 + 1 else { return text }
        return "\(text.prefix(keep))…\(text.suffix(keep))"
    }

    /// Escapes text for HTML (element content and quoted attributes).
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// A path segment, percent-encoded.
    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? ""
    }

    static func accountLink(_ account: AccountID) -> String { "/console/accounts/\(segment(account.rawValue))" }

    static func transactionLink(_ environment: AppStoreEnvironment, _ transactionId: String) -> String {
        "/console/transactions/\(segment(environment.rawValue))/\(segment(transactionId))"
    }

    // MARK: Timeline

    struct TimelineEntry: Sendable {
        let sequence: Int64
        let time: String
        let type: String
        let title: String
        let detail: String
        let productId: String
        let entitled: String?
        let tone: String
        let transactionLink: String?
        let transactionLabel: String?
    }

    static func timelineEntry(_ event: LedgerEvent) -> TimelineEntry {
        let (title, tone) = Self.title(event)
        var details: [String] = []
        if let previous = event.previousState, let state = event.entitlement?.state {
            details.append("\(previous.rawValue) → \(state.rawValue)")
        } else if let state = event.entitlement?.state {
            details.append("state \(state.rawValue)")
        }
        if let expires = event.entitlement?.expiresDate { details.append("expires \(time(expires))") }
        if let quantity = event.quantity { details.append("quantity \(quantity)") }
        if let balance = event.entitlement?.balance { details.append("balance \(balance.available) available") }
        if let reason = event.revocationReason { details.append("revocation reason \(reason)") }
        if let refusal = event.refusal { details.append("refused: \(refusal)") }
        if let type = event.notificationType {
            details.append("notification \(type)\(event.notificationSubtype.map { " / \($0)" } ?? "")")
        }
        if let key = event.idempotencyKey { details.append("idempotency key \(abbreviated(key))") }
        if let grant = event.grant {
            details.append("entitlement \(grant.entitlement) until \(time(grant.expiresAt))")
            details.append("“\(abbreviated(grant.reason, keep: 60))”\(grant.actor.map { " by \($0)" } ?? "")")
        }
        if let transfer = event.transfer {
            details.append(transfer.direction == .outgoing ? "to account \(abbreviated(transfer.to.rawValue, keep: 24))" : "from account \(abbreviated(transfer.from.rawValue, keep: 24))")
            if let reason = transfer.reason {
                details.append("“\(abbreviated(reason, keep: 60))”\(transfer.actor.map { " by \($0)" } ?? "")")
            } else {
                details.append("restored by the account it moved to")
            }
        }
        if let support = event.support {
            details.append("\(support.days.map { "\($0) days" } ?? "extended"), reason \(support.reason)\(support.actor.map { " by \($0)" } ?? "")")
            if let date = support.effectiveDate { details.append("renews \(time(date))") }
        }
        if event.source == LedgerEvent.timeSource {
            details.append("as time passed, at \(time(event.occurredAt))")
        } else {
            details.append("via \(event.source)")
        }
        // A move names its family, not a transaction: it links the family's original transaction.
        let linked = event.transactionId ?? (event.type == .purchaseTransferred ? event.originalTransactionId : nil)
        let link = event.environment.flatMap { environment in linked.map { transactionLink(environment, $0) } }
        return TimelineEntry(
            sequence: event.sequence,
            time: time(event.recordedAt),
            type: event.type.rawValue,
            title: title,
            detail: details.joined(separator: " · "),
            productId: event.productId,
            entitled: event.entitlement.map { $0.isEntitled ? "entitled" : "not entitled" },
            tone: tone,
            transactionLink: link,
            transactionLabel: linked
        )
    }

    private static func title(_ event: LedgerEvent) -> (String, String) {
        switch event.type {
        case .purchaseRecorded: return ("Purchase recorded", "good")
        case .subscriptionRenewed: return ("Subscription renewed", "good")
        case .subscriptionStateChanged: return ("Subscription state changed", event.entitlement?.isEntitled == true ? "good" : "bad")
        case .autoRenewDisabled: return ("Auto-renew turned off", "warn")
        case .autoRenewEnabled: return ("Auto-renew turned on", "good")
        case .renewalProductChanged: return ("Renewal product changed", "neutral")
        case .transactionRevoked: return ("Refunded or revoked", "bad")
        case .transactionReinstated: return ("Reinstated", "good")
        case .consumableCredited: return ("Consumable credited", "good")
        case .consumableConsumed: return ("Consumable consumed", "neutral")
        case .proofRefused: return ("Proof refused", "bad")
        case .subscriptionUpgraded: return ("Upgraded away from this product", "neutral")
        case .grantCreated: return ("Granted by hand", "good")
        case .grantRevoked: return ("Grant revoked", "bad")
        case .grantExpired: return ("Grant ended", "warn")
        case .purchaseTransferred:
            return event.transfer?.direction == .outgoing ? ("Purchase moved to another account", "warn") : ("Purchase moved here", "good")
        case .subscriptionExtended: return ("Renewal date extended by support", "good")
        case .entitlementChanged:
            guard let change = event.change else { return ("Entitlement changed", "neutral") }
            if change.after.isActive {
                return (change.before?.isActive == true ? "Entitlement extended" : "Entitlement active", "good")
            }
            return ("Entitlement ended", "warn")
        default: return (event.type.rawValue, "neutral")
        }
    }

    // MARK: Entitlements in the catalog's words

    struct EntitlementRow: Sendable {
        let identifier: String
        let status: String
        let tone: String
        let expires: String
        let detail: String
        let sourceLink: String?
        let sourceLabel: String
        let others: String
    }

    static func entitlementRows(_ entitlements: [Entitlement]) -> [EntitlementRow] {
        entitlements.map { entitlement in
            var details: [String] = []
            if let state = entitlement.subscriptionState { details.append("subscription \(state.rawValue)") }
            if let renews = entitlement.willRenew { details.append(renews ? "renews" : "does not renew") }
            if let period = entitlement.periodType { details.append("\(period.rawValue) period") }
            if let balance = entitlement.balance { details.append("balance \(balance)") }
            let source = entitlement.source
            var link: String?
            var label = "nothing unlocks it"
            if let source {
                switch source.kind {
                case .grant:
                    label = "grant \(abbreviated(source.grantId ?? "", keep: 8))"
                    link = "#grants"
                case .product, .transaction:
                    label = "\(source.kind.rawValue) \(source.productId ?? "")"
                    if let environment = source.environment, let transaction = source.transactionId {
                        link = transactionLink(environment, transaction)
                    }
                }
            }
            return EntitlementRow(
                identifier: entitlement.identifier, status: entitlement.isActive ? "active" : "inactive",
                tone: entitlement.isActive ? "good" : "neutral",
                expires: entitlement.expiresAt.map { time($0) } ?? (entitlement.isActive ? "never" : "—"),
                detail: details.joined(separator: " · "), sourceLink: link, sourceLabel: label,
                others: entitlement.otherSources.isEmpty ? "" : "+\(entitlement.otherSources.count) other source(s): "
                    + entitlement.otherSources.map { "\($0.kind.rawValue)\($0.productId.map { " \($0)" } ?? "")\($0.isActive ? "" : " (inactive)")" }.joined(separator: ", ")
            )
        }
    }

    struct GrantRow: Sendable {
        let id: String
        let shortId: String
        let entitlement: String
        let status: String
        let tone: String
        let starts: String
        let expires: String
        let reason: String
        let grantedBy: String
        let revocation: String?
        let revokeAction: String?
    }

    static func grantRows(_ grants: [EntitlementGrant], account: AccountID, at date: Date, canManage: Bool) -> [GrantRow] {
        grants.map { grant in
            let active = grant.isActive(at: date)
            let status = grant.revokedAt != nil ? "revoked" : active ? "active" : grant.startsAt > date ? "scheduled" : "ended"
            return GrantRow(
                id: grant.id, shortId: abbreviated(grant.id, keep: 8), entitlement: grant.entitlement, status: status,
                tone: active ? "good" : grant.revokedAt != nil ? "bad" : "neutral", starts: time(grant.startsAt), expires: time(grant.expiresAt),
                reason: grant.reason, grantedBy: grant.grantedBy,
                revocation: grant.revokedAt.map { "revoked \(time($0)) by \(grant.revokedBy ?? "?"): \(grant.revocationReason ?? "")" },
                revokeAction: canManage && active ? "\(accountLink(account))/grants/\(segment(grant.id))/revoke" : nil
            )
        }
    }

    // MARK: Products

    struct Owned: Sendable {
        let productId: String
        let kind: String
        let status: String
        let tone: String
        let detail: String?
        let transactions: [EvidenceTransaction]
        let notifications: [EvidenceNotification]
        // Stored, not computed: Mustache reads values through Mirror.
        let transactionCount: Int
        let hasNotifications: Bool

        init(productId: String, kind: String, status: String, tone: String, detail: String?, transactions: [EvidenceTransaction], notifications: [EvidenceNotification]) {
            self.productId = productId
            self.kind = kind
            self.status = status
            self.tone = tone
            self.detail = detail
            self.transactions = transactions
            self.notifications = notifications
            transactionCount = transactions.count
            hasNotifications = !notifications.isEmpty
        }
    }

    struct EvidenceTransaction: Sendable {
        let id: String
        let link: String
        let purchased: String
        let expires: String
        let revoked: String
        let source: String
    }

    struct EvidenceNotification: Sendable {
        let type: String
        let signed: String
        let uuid: String
    }

    struct Balance: Sendable {
        let productId: String
        let purchased: Int
        let refunded: Int
        let consumed: Int
        let available: Int
        let refundDebt: Int
    }

    static func owned(_ entitlements: Entitlements) -> [Owned] {
        func evidence(_ transactions: [RecordedTransaction]) -> [EvidenceTransaction] {
            transactions.sorted { $0.purchaseDate > $1.purchaseDate }.map { transaction in
                EvidenceTransaction(
                    id: transaction.transactionId, link: transactionLink(transaction.environment, transaction.transactionId),
                    purchased: time(transaction.purchaseDate), expires: time(transaction.expiresDate),
                    revoked: transaction.revocationDate.map { time($0) } ?? "", source: transaction.source.rawValue
                )
            }
        }
        func notes(_ notifications: [RecordedNotification]) -> [EvidenceNotification] {
            notifications.sorted { $0.signedDate > $1.signedDate }.map { notification in
                EvidenceNotification(
                    type: notification.notificationType + (notification.subtype.map { " / \($0)" } ?? ""),
                    signed: time(notification.signedDate), uuid: abbreviated(notification.notificationUUID)
                )
            }
        }
        var rows: [Owned] = []
        for subscription in entitlements.subscriptions {
            var detail = ["group \(subscription.subscriptionGroup)", "expires \(time(subscription.expiresDate))"]
            if let renew = subscription.willAutoRenew { detail.append(renew ? "auto-renew on" : "auto-renew off") }
            if let next = subscription.autoRenewProductId, next != subscription.productId { detail.append("renews to \(next)") }
            if subscription.isInBillingRetryPeriod { detail.append("in billing retry") }
            let notifications = notes(subscription.notifications)
            rows.append(Owned(
                productId: subscription.productId, kind: "subscription", status: subscription.state.rawValue,
                tone: subscription.isEntitled ? "good" : "bad", detail: detail.joined(separator: " · "),
                transactions: evidence(subscription.transactions), notifications: notifications
            ))
        }
        let products = entitlements.nonConsumables + entitlements.nonRenewingSubscriptions + entitlements.consumables + entitlements.otherProducts
        for product in products {
            let notifications = notes(product.notifications)
            let revoked = product.transactions.allSatisfy(\.isRevoked)
            rows.append(Owned(
                productId: product.productId, kind: product.productType.rawValue,
                status: product.isEntitled ? "entitled" : (revoked ? "refunded or revoked" : "not entitled"),
                tone: product.isEntitled ? "good" : "bad",
                detail: product.balance.map { "\($0.available) available of \($0.purchased) purchased" },
                transactions: evidence(product.transactions), notifications: notifications
            ))
        }
        return rows
    }

    static func balances(_ entitlements: Entitlements) -> [Balance] {
        entitlements.consumables.compactMap(\.balance).map { balance in
            Balance(
                productId: balance.productId, purchased: balance.purchased, refunded: balance.refunded,
                consumed: balance.consumed, available: balance.available, refundDebt: balance.refundDebt
            )
        }
    }

    // MARK: Overview charts

    struct Chart: Sendable {
        let title: String
        let total: String
        let svg: String
    }

    /// A bar chart of one series, as inline SVG: labelled for screen readers (`role="img"`,
    /// a `<title>` and a `<desc>` with the figures), each bar with its own `<title>`.
    static func chart(title: String, values: [(day: Date, value: Int)], tone: String, summary: String) -> Chart {
        let width = 360.0, height = 130.0, top = 12.0, bottom = 20.0
        let maximum = max(1, values.map(\.value).max() ?? 1)
        let slot = width / Double(max(values.count, 1))
        var svg = """
            <svg class="chart \(tone)" viewBox="0 0 \(Int(width)) \(Int(height))" role="img" aria-labelledby="t-\(segment(title)) d-\(segment(title))">\
            <title id="t-\(segment(title))">\(escape(title))</title><desc id="d-\(segment(title))">\(escape(summary))</desc>\
            <line x1="0" y1="\(height - bottom)" x2="\(width)" y2="\(height - bottom)" class="axis"/>
            """
        for (index, point) in values.enumerated() where point.value > 0 {
            let barHeight = (height - top - bottom) * Double(point.value) / Double(maximum)
            let x = Double(index) * slot + slot * 0.15
            svg += """
                <rect x="\(format(x))" y="\(format(height - bottom - barHeight))" width="\(format(slot * 0.7))" height="\(format(barHeight))">\
                <title>\(escape(day(point.day))): \(point.value)</title></rect>
                """
        }
        if let first = values.first, let last = values.last {
            svg += """
                <text x="0" y="\(height - 6)" class="label">\(escape(day(first.day)))</text>\
                <text x="\(width)" y="\(height - 6)" class="label end">\(escape(day(last.day)))</text>\
                <text x="\(width)" y="\(top + 2)" class="label end">max \(maximum)</text>
                """
        }
        svg += "</svg>"
        return Chart(title: title, total: summary, svg: svg)
    }

    private static func format(_ value: Double) -> String { String(format: "%.1f", value) }

    static func charts(_ activity: [DailyActivity]) -> [Chart] {
        func series(_ key: KeyPath<DailyActivity, Int>) -> [(day: Date, value: Int)] { activity.map { ($0.day, $0[keyPath: key]) } }
        func total(_ key: KeyPath<DailyActivity, Int>) -> Int { activity.map { $0[keyPath: key] }.reduce(0, +) }
        let days = activity.count
        let active = activity.last?.activeSubscriptions ?? 0
        return [
            chart(title: "New purchases", values: series(\.purchases), tone: "good", summary: "\(total(\.purchases)) in \(days) days"),
            chart(title: "Renewals", values: series(\.renewals), tone: "good", summary: "\(total(\.renewals)) in \(days) days"),
            chart(title: "Refunds and revocations", values: series(\.refunds), tone: "bad", summary: "\(total(\.refunds)) in \(days) days"),
            chart(title: "Active subscriptions", values: series(\.activeSubscriptions), tone: "neutral", summary: "\(active) at the end of today"),
        ]
    }
}

/// Timeline entries are the console's most numerous values: looked up by name, not through
/// Mirror (which reflects every field on every lookup: a 100-entry page took 12 ms that way).
extension ConsoleViews.TimelineEntry: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "sequence": return sequence
        case "time": return time
        case "type": return type
        case "title": return title
        case "detail": return detail
        case "productId": return productId
        case "entitled": return entitled
        case "tone": return tone
        case "transactionLink": return transactionLink
        case "transactionLabel": return transactionLabel
        default: return nil
        }
    }
}
