import Foundation
import StoreGateCore
import StoreGateLedger

/// One entitlement (`Entitlement` in the OpenAPI document): active or not, until when, and why.
struct EntitlementReply: JSONWritable {
    let entitlement: Entitlement

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("identifier", entitlement.identifier)
            json.member("isActive", entitlement.isActive)
            json.member("expiresAt", entitlement.expiresAt)
            json.member("willRenew", entitlement.willRenew)
            json.member("subscriptionState", entitlement.subscriptionState?.rawValue)
            json.member("periodType", entitlement.periodType?.rawValue)
            json.member("balance", entitlement.balance)
            if let source = entitlement.source {
                json.key("source")
                Self.write(source, to: &json)
            }
            json.key("otherSources")
            json.array(entitlement.otherSources) { json, source in Self.write(source, to: &json) }
        }
    }

    static func write(_ source: EntitlementSource, to json: inout JSONWriter) {
        json.object { json in
            json.member("kind", source.kind.rawValue)
            json.member("isActive", source.isActive)
            json.member("expiresAt", source.expiresAt)
            json.member("productId", source.productId)
            json.member("transactionId", source.transactionId)
            json.member("originalTransactionId", source.originalTransactionId)
            json.member("environment", source.environment?.rawValue)
            json.member("subscriptionState", source.subscriptionState?.rawValue)
            json.member("willRenew", source.willRenew)
            json.member("periodType", source.periodType?.rawValue)
            json.member("grantId", source.grantId)
        }
    }
}

/// `GET /v1/accounts/{account}/entitlements/{entitlement}` (`EntitlementCheck`): the hot path of
/// an app's requests, one entitlement and its proof.
struct EntitlementCheckReply: JSONWritable {
    let account: String
    let asOf: Date
    let entitlement: Entitlement

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("account", account)
            json.member("asOf", asOf)
            json.key("entitlement")
            EntitlementReply(entitlement: entitlement).write(to: &json)
        }
    }
}
