import Foundation
import StoreGateCore
import StoreGateTestSupport

/// A seeded random story of App Store events across accounts, told as signed notifications
/// (minted by the test CA), with the entitlements it must leave, computed here from the story
/// alone — not by the ledger's rules.
struct SyncStory {
    struct Notification {
        let uuid: String
        let signedPayload: String
    }

    /// The first purchase of each account, which the app's client sends (the ledger then owns
    /// the family, so notifications about it accrue to the account).
    var purchases: [(account: String, signedTransaction: String)] = []
    /// Every notification, in Apple's order.
    var notifications: [Notification] = []
    /// The transaction of every `CONSUMPTION_REQUEST`, one entry per request.
    var consumptionRequests: [String] = []
    /// What each account must own at `now`: product ids.
    var truth: [String: Set<String>] = [:]

    static let bundleId = "com.example.storegate"
    static let day: Int64 = 86_400_000
    /// Weekly periods over the last 25 days: the sandbox keeps 30 days of notification history.
    static let period: Int64 = 7 * day

    private struct Transaction {
        let id: String
        let product: String
        let purchased: Int64
        let expires: Int64?
        var revoked: Int64?
    }

    init(minter: JWSMinter, accounts: Int, notifications total: Int, seed: UInt64, now: Date) throws {
        var random = SeededRandom(seed: seed)
        let now = JWSPayloads.milliseconds(now)
        let start = now - 25 * Self.day
        var clock = start  // every signed date grows, so later observations win
        func tick() -> Int64 {
            clock += 60_000 + Int64(random.next() % 60_000)
            return clock
        }
        var serial = 0
        func transactionId() -> String {
            serial += 1
            return String(3_000_000_000_000_000 + serial)
        }
        func mintTransaction(_ transaction: Transaction, original: String, signed: Int64) throws -> String {
            var payload = JWSPayloads.transaction(
                bundleId: Self.bundleId, environment: "Sandbox", signedDate: Date(timeIntervalSince1970: Double(signed) / 1000),
                transactionId: transaction.id, originalTransactionId: original, productId: transaction.product,
                type: transaction.expires == nil ? "Non-Consumable" : "Auto-Renewable Subscription"
            )
            payload["purchaseDate"] = transaction.purchased
            payload["originalPurchaseDate"] = transaction.purchased
            if let expires = transaction.expires {
                payload["expiresDate"] = expires
                payload["webOrderLineItemId"] = "9" + transaction.id
            }
            if let revoked = transaction.revoked {
                payload["revocationDate"] = revoked
                payload["revocationReason"] = 0
            }
            return try minter.mint(json: payload)
        }
        var remaining = total
        func notify(_ type: String, subtype: String? = nil, _ transaction: Transaction, original: String) throws {
            let signed = tick()
            let uuid = UUID().uuidString.lowercased()
            let info = try mintTransaction(transaction, original: original, signed: signed)
            let payload = JWSPayloads.notification(
                type: type, subtype: subtype, bundleId: Self.bundleId, environment: "Sandbox",
                signedDate: Date(timeIntervalSince1970: Double(signed) / 1000), signedTransactionInfo: info, notificationUUID: uuid
            )
            notifications.append(Notification(uuid: uuid, signedPayload: try minter.mint(json: payload)))
            remaining -= 1
        }

        for index in 0..<accounts {
            let account = "sync-account-\(index)"
            let quota = remaining / (accounts - index)
            var budget = quota
            // A weekly subscription bought 25 days ago; some accounts also own "lifetime".
            let original = transactionId()
            var chain = [Transaction(id: original, product: "pro.weekly", purchased: start, expires: start + Self.period)]
            purchases.append((account, try mintTransaction(chain[0], original: original, signed: start)))
            var lifetime: (Transaction, String)?
            if random.next() % 3 == 0 {
                let id = transactionId()
                let owned = Transaction(id: id, product: "lifetime", purchased: start, expires: nil)
                purchases.append((account, try mintTransaction(owned, original: id, signed: start)))
                lifetime = (owned, id)
            }
            // Renewals: 0 to 3 (only the third reaches past now), each told by DID_RENEW.
            let renewals = min(budget, Int(random.next() % 4))
            for _ in 0..<renewals {
                let previous = chain[chain.count - 1]
                let purchased = previous.expires ?? start
                let renewal = Transaction(id: transactionId(), product: previous.product, purchased: purchased, expires: purchased + Self.period)
                chain.append(renewal)
                clock = max(clock, purchased)
                try notify("DID_RENEW", renewal, original: original)
                budget -= 1
            }
            // An upgrade to yearly, a day after the last period began.
            if budget > 0, random.next() % 4 == 0 {
                let purchased = chain[chain.count - 1].purchased + Self.day
                let yearly = Transaction(id: transactionId(), product: "pro.yearly", purchased: purchased, expires: purchased + 365 * Self.day)
                chain.append(yearly)
                clock = max(clock, purchased)
                try notify("DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", yearly, original: original)
                budget -= 1
            }
            // A refund or a revocation of the latest period.
            if budget > 0, random.next() % 3 == 0 {
                var target = chain[chain.count - 1]
                target.revoked = tick()
                chain[chain.count - 1] = target
                try notify(random.next() % 2 == 0 ? "REFUND" : "REVOKE", target, original: original)
                budget -= 1
            }
            // The lifetime purchase refunded.
            if budget > 0, var owned = lifetime, random.next() % 2 == 0 {
                owned.0.revoked = tick()
                lifetime = owned
                try notify("REFUND", owned.0, original: owned.1)
                budget -= 1
            }
            // The rest: consumption requests and renewal-status changes, which change nothing owned.
            while budget > 0 {
                let latest = chain[chain.count - 1]
                if random.next() % 2 == 0 {
                    try notify("CONSUMPTION_REQUEST", latest, original: original)
                    consumptionRequests.append(latest.id)
                } else {
                    try notify("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", latest, original: original)
                }
                budget -= 1
            }

            // The truth: the period running longest among those not revoked and not ended.
            var owned: Set<String> = []
            if let current = chain.filter({ $0.revoked == nil && ($0.expires ?? 0) > now }).max(by: { ($0.expires ?? 0) < ($1.expires ?? 0) }) {
                owned.insert(current.product)
            }
            if let lifetime, lifetime.0.revoked == nil { owned.insert("lifetime") }
            truth[account] = owned
        }
    }
}

/// SplitMix64: a reproducible random sequence (the seed is printed by the tests using it).
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
