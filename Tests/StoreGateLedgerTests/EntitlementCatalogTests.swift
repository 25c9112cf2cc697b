import Foundation
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// The catalog maps products to the app's entitlements, and entitlements are derived from
    /// the ledger's facts when read (issue 28).
    @Suite("Entitlements from the catalog")
    struct EntitlementCatalog {
        static let alice = Purchases.account("alice")

        static let catalogJSON = """
            { "products": { "pro.monthly": { "type": "Auto-Renewable Subscription", "subscriptionGroup": "pro" },
                            "coins": { "type": "Consumable" }, "coins.big": { "type": "Consumable" } },
              "entitlements": { "pro": { "products": ["pro.monthly", "pro.yearly", "pro.lifetime"] },
                                "ad_free": { "products": ["pro.lifetime", "adfree"] },
                                "gems": { "currency": { "coins": 1, "coins.big": 10 } } } }
            """

        static func catalog() throws -> ProductCatalog {
            try ProductCatalog(json: Array(catalogJSON.utf8))
        }

        static func resolve(_ transactions: [VerifiedTransaction], grants: [EntitlementGrant] = [], catalog: ProductCatalog? = nil, at days: Double) async throws -> [String: Entitlement] {
            let ledger = InMemoryLedger()
            for transaction in transactions { try await ledger.record(Purchases.proof(transaction), for: alice) }
            let holdings = try await ledger.entitlements(for: alice, at: Purchases.date(days))
            let resolved = EntitlementResolver.resolve(holdings, catalog: try catalog ?? Self.catalog(), grants: grants, at: Purchases.date(days))
            return Dictionary(uniqueKeysWithValues: resolved.map { ($0.identifier, $0) })
        }

        @Test("a catalog without entitlements reads as before; one with them lists each entitlement's products")
        func reads() throws {
            let plain = try ProductCatalog(json: Array(#"{"products": {"coins": {"type": "Consumable"}}}"#.utf8))
            #expect(plain.entitlements.isEmpty)
            #expect(plain.productType(for: "coins", stated: nil, expiresDate: nil) == .consumable)
            let catalog = try Self.catalog()
            #expect(catalog.entitlements.keys.sorted() == ["ad_free", "gems", "pro"])
            #expect(catalog.entitlements(unlockedBy: "pro.lifetime") == ["ad_free", "pro"])
            #expect(catalog.entitlements["gems"]?.currency == ["coins": 1, "coins.big": 10])
            #expect(catalog.entitlements["gems"]?.products == ["coins", "coins.big"])
        }

        static let badCatalogs: [(json: String, names: String)] = [
            (#"{"entitlements": {"pro": {"products": []}}}"#, "entitlement 'pro'"),
            (#"{"entitlements": {"pro": {}}}"#, "entitlement 'pro'"),
            (#"{"entitlements": {"pro plus": {"products": ["a"]}}}"#, "entitlement 'pro plus'"),
            (#"{"entitlements": {"pro": {"products": ["a", "a"]}}}"#, "product 'a'"),
            (#"{"entitlements": {"pro": {"products": [""]}}}"#, "entitlement 'pro'"),
            (#"{"entitlements": {"gems": {"currency": {"coins": 0}}}}"#, "entitlement 'gems'"),
            (#"{"products": {"pro": {"type": "Non-Consumable"}}, "entitlements": {"gems": {"currency": {"pro": 5}}}}"#, "product 'pro'"),
            (#"{"entitlements": {"pro": {"products": "pro.monthly"}}}"#, "entitlements.pro.products"),
            (#"{"products": {"pro": {"type": "Non-Consumable", "subscriptionGroup": ""}}}"#, "product 'pro'"),
            (#"{"entitlements": ["pro"]}"#, "entitlements"),
        ]

        @Test("a bad catalog is refused in one line naming the entry", arguments: badCatalogs)
        func refusesBadCatalogs(_ json: String, _ names: String) async {
            let error = await expectLedgerError(.invalidConfiguration) { try ProductCatalog(json: Array(json.utf8)) }
            #expect(error?.reason.contains(names) == true, "\(error?.reason ?? "")")
            #expect(error?.reason.contains("\n") == false)
        }

        @Test("a lifetime purchase outranks a subscription; the subscription is listed as another source")
        func strongestSource() async throws {
            let resolved = try await Self.resolve([
                Purchases.period("m1", original: "m1", start: 0),
                Purchases.nonConsumable("l1", at: Purchases.date(2)),
            ], at: 10)
            let pro = try #require(resolved["pro"])
            #expect(pro.isActive)
            #expect(pro.expiresAt == nil)
            #expect(pro.source?.kind == .product)
            #expect(pro.source?.productId == "pro.lifetime")
            #expect(pro.otherSources.map(\.kind) == [.transaction])
            #expect(pro.otherSources.first?.subscriptionState == .active)
            #expect(pro.otherSources.first?.expiresAt == Purchases.date(30))
            // The same purchase unlocks a second entitlement.
            #expect(resolved["ad_free"]?.isActive == true)
            #expect(resolved["ad_free"]?.source?.transactionId == "l1")
        }

        @Test("a subscription decides until its period ends; then the entitlement is inactive with the expired state behind it")
        func subscriptionExpires() async throws {
            let active = try await Self.resolve([Purchases.period("m1", original: "m1", start: 0)], at: 10)
            let pro = try #require(active["pro"])
            #expect(pro.isActive && pro.expiresAt == Purchases.date(30) && pro.subscriptionState == .active)
            #expect(pro.source?.kind == .transaction && pro.source?.transactionId == "m1")
            #expect(active["ad_free"]?.isActive == false)
            #expect(active["ad_free"]?.source == nil)

            let later = try await Self.resolve([Purchases.period("m1", original: "m1", start: 0)], at: 40)
            #expect(later["pro"]?.isActive == false)
            #expect(later["pro"]?.subscriptionState == .expired)
        }

        @Test("a refunded lifetime purchase no longer unlocks; a grant does until it ends or is revoked")
        func refundsAndGrants() async throws {
            let refunded = Purchases.nonConsumable("l1", revoked: Purchases.date(3), signed: Purchases.date(3))
            let grant = EntitlementGrant(
                id: "g1", account: Self.alice, entitlement: "pro", startsAt: Purchases.date(4), expiresAt: Purchases.date(20),
                reason: "support ticket 42", grantedBy: "support", idempotencyKey: "t-42"
            )
            let during = try await Self.resolve([refunded], grants: [grant], at: 10)
            let pro = try #require(during["pro"])
            #expect(pro.isActive)
            #expect(pro.source?.kind == .grant && pro.source?.grantId == "g1" && pro.expiresAt == Purchases.date(20))
            #expect(pro.otherSources.map(\.kind) == [.product])
            #expect(pro.otherSources.first?.isActive == false)

            let after = try await Self.resolve([refunded], grants: [grant], at: 21)
            #expect(after["pro"]?.isActive == false)
            var revoked = grant
            revoked.revokedAt = Purchases.date(8)
            let revokedEarly = try await Self.resolve([refunded], grants: [revoked], at: 10)
            #expect(revokedEarly["pro"]?.isActive == false)
            #expect(revokedEarly["pro"]?.source?.kind == .grant)
            #expect(revokedEarly["pro"]?.source?.expiresAt == Purchases.date(8))
        }

        @Test("a currency reports the worth of the units left, active while above zero")
        func currency() async throws {
            let resolved = try await Self.resolve([
                Purchases.consumable("c1", quantity: 3),
                Purchases.consumable("c2", product: "coins.big", quantity: 2),
            ], at: 1)
            #expect(resolved["gems"]?.balance == 23)
            #expect(resolved["gems"]?.isActive == true)
            #expect(resolved["gems"]?.otherSources.count == 1)
            let none = try await Self.resolve([], at: 1)
            #expect(none["gems"]?.balance == 0)
            #expect(none["gems"]?.isActive == false)
        }

        @Test("a changed mapping applies to the same facts at once")
        func mappingApplies() async throws {
            let purchases = [Purchases.nonConsumable("a1", product: "adfree")]
            #expect(try await Self.resolve(purchases, at: 1)["pro"]?.isActive == false)
            var catalog = try Self.catalog()
            catalog.entitlements["pro"]?.products.append("adfree")
            #expect(try await Self.resolve(purchases, catalog: catalog, at: 1)["pro"]?.isActive == true)
        }
    }
}
