import Foundation
import Hummingbird
import StoreGateCore
import StoreGateLedger

/// `POST /v1/accounts/{account}/consumables/{productId}/consume` (`ConsumeRequest`).
struct ConsumeRequest: JSONRequestBody {
    /// Units to consume (default 1).
    let quantity: Int?
    /// The caller's key for this consumption: a retry with the same key consumes nothing more.
    let idempotencyKey: String

    init(_ object: RequestObject) throws(APIError) {
        try object.rejectUnknownMembers(["quantity", "idempotencyKey"])
        quantity = try object.optionalInteger("quantity")
        idempotencyKey = try object.string("idempotencyKey")
    }
}

/// The reply of a consumption (`ConsumeReply`).
struct ConsumeReply: JSONWritable {
    let account: String
    let productId: String
    let quantity: Int
    let idempotencyKey: String
    let consumedAt: Date
    let remaining: Int
    let isReplay: Bool

    init(_ receipt: ConsumptionReceipt) {
        account = receipt.account.rawValue
        productId = receipt.productId
        quantity = receipt.quantity
        idempotencyKey = receipt.idempotencyKey
        consumedAt = receipt.consumedAt
        remaining = receipt.remaining
        isReplay = receipt.isReplay
    }

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("account", account)
            json.member("productId", productId)
            json.member("quantity", quantity)
            json.member("idempotencyKey", idempotencyKey)
            json.member("consumedAt", consumedAt)
            json.member("remaining", remaining)
            json.member("isReplay", isReplay)
        }
    }
}

extension Endpoints {
    /// Everything the account holds now.
    @Sendable func readEntitlements(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let account = try Self.account(try Self.pathParameter("account", context), field: "account")
        let facts = try await entitlementFacts(account, context: context)
        return JSONReply.response(entitlementsReply(facts.holdings, grants: facts.grants))
    }

    /// The reply of an account's holdings with the catalog's entitlements derived from them and
    /// its grants.
    func entitlementsReply(_ holdings: Entitlements, grants: [EntitlementGrant]) -> EntitlementsReply {
        EntitlementsReply(holdings, catalog: EntitlementResolver.resolve(holdings, catalog: catalog.current, grants: grants, at: holdings.date))
    }

    /// The reply of a verification: the account's holdings and entitlements after it.
    func entitlementsReply(_ holdings: Entitlements, context: StoreGateRequestContext) async throws(APIError) -> EntitlementsReply {
        entitlementsReply(holdings, grants: try await grants(holdings.account, context: context))
    }

    /// One entitlement now: the app's check before it unlocks a feature.
    @Sendable func readEntitlement(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let account = try Self.account(try Self.pathParameter("account", context), field: "account")
        let identifier = try Self.pathParameter("entitlement", context)
        let catalog = self.catalog.current
        guard catalog.entitlements[identifier] != nil else {
            throw APIError(.notFound, .unknownEntitlement, "the catalog defines no entitlement '\(identifier.prefix(64))'", field: "entitlement")
        }
        let facts = try await entitlementFacts(account, context: context)
        let holdings = facts.holdings
        guard let entitlement = EntitlementResolver.resolve(identifier, holdings: holdings, catalog: catalog, grants: facts.grants, at: holdings.date) else {
            throw APIError(.notFound, .unknownEntitlement, "the catalog defines no entitlement '\(identifier.prefix(64))'", field: "entitlement")
        }
        return JSONReply.response(EntitlementCheckReply(account: account.rawValue, asOf: holdings.date, entitlement: entitlement))
    }

    /// Consumes units of a consumable, atomically and idempotently.
    @Sendable func consume(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let account = try Self.account(try Self.pathParameter("account", context), field: "account")
        let productId = try Self.pathParameter("productId", context)
        let input = try await decode(ConsumeRequest.self, request)
        let quantity = input.quantity ?? 1
        guard (1...LedgerPlanner.maximumQuantity).contains(quantity) else {
            throw APIError.badField("quantity", .invalidField, "'quantity' must be 1...\(LedgerPlanner.maximumQuantity)")
        }
        guard (1...LedgerPlanner.maximumIdentifierLength).contains(input.idempotencyKey.utf8.count) else {
            throw APIError.badField("idempotencyKey", .invalidField, "'idempotencyKey' has 1...\(LedgerPlanner.maximumIdentifierLength) UTF-8 bytes")
        }
        guard productId.utf8.count <= LedgerPlanner.maximumIdentifierLength else {
            throw APIError.badField("productId", .invalidPathParameter, "the product id has at most \(LedgerPlanner.maximumIdentifierLength) UTF-8 bytes")
        }
        do throws(LedgerError) {
            let receipt = try await ledger.consume(productId, quantity: quantity, idempotencyKey: input.idempotencyKey, for: account, at: now())
            return JSONReply.response(ConsumeReply(receipt))
        } catch {
            throw APIError.ledger(error, argumentStatus: .badRequest, logger: context.logger)
        }
    }
}

extension Endpoints {
    /// What an account holds, spending it, and refreshing it from Apple.
    var accountRoutes: [Route] {
        [
            Route(.get, "/v1/accounts/:account/entitlements", .apiKey(.entitlementsRead), readEntitlements),
            Route(.get, "/v1/accounts/:account/entitlements/:entitlement", .apiKey(.entitlementsRead), readEntitlement),
            Route(.post, "/v1/accounts/:account/consumables/:productId/consume", .apiKey(.consumablesConsume), consume),
            Route(.post, "/v1/accounts/:account/refresh", .apiKey(.accountsRefresh), refreshAccount),
        ]
    }
}
