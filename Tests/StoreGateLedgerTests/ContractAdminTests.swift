import Crypto
import Foundation
import StoreGateCore
@testable import StoreGateLedger
@testable import StoreGateLedgerSQLite
import Testing

extension LedgerTests {
    /// Schema 13: webhook endpoints and API keys managed live, the same on every backend.
    @Suite("Ledger contract: webhook endpoints and API keys")
    struct Admin {
        static let t = Date(timeIntervalSince1970: 1_800_000_000)
        static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

        static func endpoint(_ name: String, url: String = "https://hooks.example.com/a", secrets: [String] = [secret], types: [String]? = nil) -> StoredWebhookEndpoint {
            StoredWebhookEndpoint(name: name, url: url, secrets: secrets, types: types, createdAt: t, updatedAt: t)
        }

        static func digest(_ secret: String) -> [UInt8] { Array(SHA256.hash(data: Array(secret.utf8))) }

        @Test("endpoints: created once (seeding is idempotent), updated only at the revision read, listed by name", arguments: LedgerBackend.all)
        func endpoints(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                #expect(try await ledger.webhookEndpoints().isEmpty)
                #expect(try await ledger.createWebhookEndpoint(Self.endpoint("b", types: ["transaction.revoked", "grant.created"])))
                #expect(try await ledger.createWebhookEndpoint(Self.endpoint("a")))
                #expect(try await ledger.createWebhookEndpoint(Self.endpoint("a", url: "https://other.example.com/")) == false, "a name is taken once")
                var listed = try await ledger.webhookEndpoints()
                #expect(listed.map(\.name) == ["a", "b"])
                #expect(listed[0].url == "https://hooks.example.com/a", "the second create changed nothing")
                #expect(listed[0].secrets == [Self.secret])
                #expect(listed[0].revision == 1)
                #expect(listed[0].createdAt == Self.t)
                #expect(listed[1].types == ["grant.created", "transaction.revoked"])
                #expect(listed[0].types == nil)
                #expect(!"\(listed[0])".contains(Self.secret), "a description never holds a secret")

                var changed = listed[0]
                changed.url = "https://hooks.example.com/v2"
                changed.secrets = ["whsec_new-secret-0123456789abcdef", Self.secret]
                changed.isPaused = true
                changed.types = ["grant.created"]
                changed.updatedAt = Self.t.addingTimeInterval(60)
                #expect(try await ledger.updateWebhookEndpoint(changed, expectedRevision: 1))
                #expect(try await ledger.updateWebhookEndpoint(changed, expectedRevision: 1) == false, "a stale revision changes nothing")
                listed = try await ledger.webhookEndpoints()
                #expect(listed[0].revision == 2)
                #expect(listed[0].url == "https://hooks.example.com/v2")
                #expect(listed[0].secrets == ["whsec_new-secret-0123456789abcdef", Self.secret])
                #expect(listed[0].isPaused)
                #expect(listed[0].types == ["grant.created"])
                #expect(listed[0].updatedAt == Self.t.addingTimeInterval(60))
                #expect(try await ledger.updateWebhookEndpoint(Self.endpoint("missing"), expectedRevision: 1) == false)

                await expectLedgerError(.invalidArgument) { try await ledger.createWebhookEndpoint(Self.endpoint("bad name")) }
                await expectLedgerError(.invalidArgument) { try await ledger.createWebhookEndpoint(Self.endpoint("c", secrets: [])) }
                await expectLedgerError(.invalidArgument) { try await ledger.createWebhookEndpoint(Self.endpoint("c", secrets: ["short"])) }
                await expectLedgerError(.invalidArgument) {
                    try await ledger.createWebhookEndpoint(Self.endpoint("c", secrets: (0..<6).map { "secret-\($0)-0123456789abcdef" }))
                }
                await expectLedgerError(.invalidArgument) { try await ledger.createWebhookEndpoint(Self.endpoint("c", types: ["a,b"])) }
            }
        }

        @Test("an endpoint receives exactly the events recorded after it was added, however late its deliverer first looks, and again after it is deleted and added anew", arguments: LedgerBackend.all)
        func placedWhenAdded(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let alice = Purchases.account("alice")
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("before")), for: alice)
                let before = try await Events.drain(ledger)
                #expect(!before.isEmpty)
                #expect(try await ledger.createWebhookEndpoint(Self.endpoint("late")))
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("after-1")), for: alice)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("after-2")), for: alice)
                let after = try await Events.drain(ledger, after: before.last?.sequence ?? 0)
                #expect(Set(after.compactMap(\.transactionId)) == ["after-1", "after-2"])
                // The deliverer's first look comes after both: they are delivered, "before" is not.
                #expect(try await Deliveries.fanOut(ledger, endpoint: "late", types: nil, limit: 100, now: Self.t) == after.count)
                #expect(try await ledger.deliveries(endpoint: "late", status: nil, after: 0, limit: 100).map(\.sequence) == after.map(\.sequence))
                // Creating it again changes nothing (the name is taken): its place stays.
                #expect(try await ledger.createWebhookEndpoint(Self.endpoint("late")) == false)
                #expect(try await Deliveries.fanOut(ledger, endpoint: "late", types: nil, limit: 100, now: Self.t) == 0)

                // Deleted and added anew: it starts at the end again.
                #expect(try await ledger.deleteWebhookEndpoint(named: "late", states: []))
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("while-gone")), for: alice)
                let gone = try await Events.drain(ledger, after: after.last?.sequence ?? 0)
                #expect(try await ledger.createWebhookEndpoint(Self.endpoint("late")))
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("anew")), for: alice)
                let anew = try await Events.drain(ledger, after: gone.last?.sequence ?? 0)
                #expect(Set(anew.compactMap(\.transactionId)) == ["anew"])
                #expect(try await Deliveries.fanOut(ledger, endpoint: "late", types: nil, limit: 100, now: Self.t) == anew.count)
                #expect(try await ledger.deliveries(endpoint: "late", status: nil, after: 0, limit: 100).map(\.sequence) == anew.map(\.sequence))
            }
        }

        @Test("deleting an endpoint takes its cursor, its deliveries and its states: it no longer holds retention back", arguments: LedgerBackend.all)
        func deletionReleasesRetention(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let alice = Purchases.account("alice")
                #expect(try await ledger.createWebhookEndpoint(Self.endpoint("gone")))
                #expect(try await Deliveries.fanOut(ledger, endpoint: "gone", types: nil, limit: 100, now: Self.t) == 0)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("a1")), for: alice)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("a2")), for: alice)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("a3")), for: alice)
                #expect(try await Deliveries.fanOut(ledger, endpoint: "gone", types: nil, limit: 100, now: Self.t) == 3)
                let allOld = Date().addingTimeInterval(3600)
                #expect(try await ledger.pruneEvents(recordedBefore: allOld, limit: 100).deleted == 0, "owed to the endpoint")
                let state = "webhooks/disabled/gone"
                _ = try await ledger.acquireLease(on: state, holder: "x", now: Self.t, lease: .seconds(30))

                #expect(try await ledger.deleteWebhookEndpoint(named: "gone", states: [state]))
                #expect(try await ledger.deleteWebhookEndpoint(named: "gone", states: [state]) == false)
                #expect(try await ledger.webhookEndpoints().isEmpty)
                #expect(try await ledger.deliveries(endpoint: "gone", status: nil, after: 0, limit: 100).isEmpty)
                #expect(try await ledger.leasedStates(prefix: state).isEmpty)
                #expect(try await ledger.pruneEvents(recordedBefore: allOld, limit: 100) == EventPruning(deleted: 2, prunedThrough: 2), "only the newest stays")

                // A deliverer that had not seen the deletion fans out again: its leftovers are cleared,
                // but never those of an endpoint that exists.
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("a4")), for: alice)
                #expect(try await Deliveries.fanOut(ledger, endpoint: "gone", types: nil, limit: 100, now: Self.t) == 0)
                #expect(try await ledger.createWebhookEndpoint(Self.endpoint("kept")))
                #expect(try await Deliveries.fanOut(ledger, endpoint: "kept", types: nil, limit: 100, now: Self.t) == 0)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("a5")), for: alice)
                #expect(try await Deliveries.fanOut(ledger, endpoint: "gone", types: nil, limit: 100, now: Self.t) == 1)
                #expect(try await Deliveries.fanOut(ledger, endpoint: "kept", types: nil, limit: 100, now: Self.t) == 1)
                try await ledger.clearWebhookEndpointLeftovers(named: "gone", states: [])
                try await ledger.clearWebhookEndpointLeftovers(named: "kept", states: [])
                #expect(try await ledger.deliveries(endpoint: "gone", status: nil, after: 0, limit: 100).isEmpty)
                #expect(try await ledger.deliveries(endpoint: "kept", status: nil, after: 0, limit: 100).count == 1)
            }
        }

        @Test("secrets are sealed at rest when an encryption key is configured, and read back", arguments: LedgerBackend.persistent)
        func sealedSecrets(backend: LedgerBackend) async throws {
            let encryption = try ProofEncryption(currentKeyID: "k1", keys: ["k1": SymmetricKey(size: .bits256)])
            try await backend.withStore { store async throws in
                let ledger = try await store.open(LedgerConfiguration(encryption: encryption))
                #expect(try await ledger.createWebhookEndpoint(Self.endpoint("sealed")))
                #expect(try await ledger.webhookEndpoints().first?.secrets == [Self.secret])
                if backend.kind == .sqlite {
                    for path in [store.location, store.location + "-wal"] {
                        let raw = FileManager.default.contents(atPath: path) ?? Data()
                        #expect(raw.range(of: Data(Self.secret.utf8)) == nil, "the secret is not in \(path) in clear")
                    }
                }
                // Opened without the key: refused, never read as something else.
                let keyless = try await store.open(LedgerConfiguration())
                await expectLedgerError(.unknownEncryptionKey) { try await keyless.webhookEndpoints() }
            }
        }

        @Test("API keys: found by digest only, revoked once, last use only moves forward", arguments: LedgerBackend.all)
        func apiKeys(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let limit = try APIKeyRateLimit(requests: 10, seconds: 60)
                let key = StoredAPIKey(
                    name: "billing", digest: Self.digest("sg_one"), permissions: ["entitlements.read", "events.read"], createdAt: Self.t, createdBy: "ops",
                    expiresAt: Self.t.addingTimeInterval(86_400), rateLimit: limit
                )
                #expect(try await ledger.createAPIKey(key))
                #expect(try await ledger.createAPIKey(key) == false, "the name is taken")
                var other = key
                other.name = "other"
                #expect(try await ledger.createAPIKey(other) == false, "the digest is taken")
                other.digest = Self.digest("sg_two")
                other.rateLimit = nil
                other.expiresAt = nil
                #expect(try await ledger.createAPIKey(other))

                let found = try #require(try await ledger.apiKey(digest: Self.digest("sg_one")))
                #expect(found == key)
                #expect(found.isUsable(at: Self.t))
                #expect(!found.isUsable(at: Self.t.addingTimeInterval(86_400)), "expired")
                #expect(try await ledger.apiKey(digest: Self.digest("sg_nope")) == nil)
                #expect(try await ledger.apiKeys().map(\.name) == ["billing", "other"])

                try await ledger.recordAPIKeyUses(["billing": Self.t.addingTimeInterval(120), "missing": Self.t])
                try await ledger.recordAPIKeyUses(["billing": Self.t.addingTimeInterval(60)])
                #expect(try await ledger.apiKey(digest: Self.digest("sg_one"))?.lastUsedAt == Self.t.addingTimeInterval(120))

                let revoked = try #require(try await ledger.revokeAPIKey(named: "billing", at: Self.t.addingTimeInterval(300)))
                #expect(revoked.revokedAt == Self.t.addingTimeInterval(300))
                #expect(!revoked.isUsable(at: Self.t))
                #expect(try await ledger.revokeAPIKey(named: "billing", at: Self.t.addingTimeInterval(900))?.revokedAt == Self.t.addingTimeInterval(300))
                #expect(try await ledger.revokeAPIKey(named: "missing", at: Self.t) == nil)
                #expect(try await ledger.apiKey(digest: Self.digest("sg_two"))?.revokedAt == nil)

                var bad = other
                bad.name = "bad name"
                await expectLedgerError(.invalidArgument) { try await ledger.createAPIKey(bad) }
                bad.name = "short-digest"
                bad.digest = [1, 2, 3]
                await expectLedgerError(.invalidArgument) { try await ledger.createAPIKey(bad) }
                #expect(throws: LedgerError(.invalidArgument, reason: "")) { try APIKeyRateLimit(requests: 0, seconds: 1) }
                #expect(throws: LedgerError(.invalidArgument, reason: "")) { try APIKeyRateLimit(text: "100") }
                #expect(try APIKeyRateLimit(text: "6000/60") == APIKeyRateLimit(requests: 6000, seconds: 60))
            }
        }

        @Test("a key revoked through one ledger is seen revoked through another on the same store", arguments: LedgerBackend.persistent)
        func sharedAcrossInstances(backend: LedgerBackend) async throws {
            try await backend.withStore { store async throws in
                let one = try await store.open()
                let two = try await store.open()
                let key = StoredAPIKey(name: "shared", digest: Self.digest("sg_shared"), permissions: ["events.read"], createdAt: Self.t, createdBy: "ops")
                #expect(try await one.createAPIKey(key))
                #expect(try await two.apiKey(digest: key.digest)?.revokedAt == nil)
                _ = try await one.revokeAPIKey(named: "shared", at: Self.t)
                #expect(try await two.apiKey(digest: key.digest)?.revokedAt == Self.t)
                #expect(try await one.createWebhookEndpoint(Self.endpoint("shared")))
                #expect(try await two.webhookEndpoints().map(\.name) == ["shared"])
            }
        }
    }
}
