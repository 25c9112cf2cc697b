public import Foundation

/// An account's entitlements as last announced in the event stream (`entitlement.changed`):
/// what the entitlement tracker compares the account's entitlements now with.
public struct EntitlementSnapshot: Sendable, Hashable, Codable {
    /// One entitlement as announced.
    public struct Item: Sendable, Hashable, Codable {
        /// Whether it was active.
        public var isActive: Bool
        /// When it was to end (`nil`: it would not, or nothing unlocked it).
        public var expiresAt: Date?
        /// The kind of its deciding source.
        public var source: EntitlementSource.Kind?
        /// The deciding source's product, when it is a purchase.
        public var productId: String?
        /// The deciding grant, when it is one.
        public var grantId: String?

        public init(isActive: Bool, expiresAt: Date?, source: EntitlementSource.Kind?, productId: String?, grantId: String?) {
            self.isActive = isActive
            self.expiresAt = expiresAt
            self.source = source
            self.productId = productId
            self.grantId = grantId
        }

        /// The item of a resolved entitlement.
        public init(_ entitlement: Entitlement) {
            self.init(
                isActive: entitlement.isActive, expiresAt: entitlement.expiresAt?.ledgerNormalized, source: entitlement.source?.kind,
                productId: entitlement.source?.productId, grantId: entitlement.source?.grantId
            )
        }

        /// Whether going from `self` to `other` is a change a backend acts on: the
        /// entitlement flipped, or its end moved.
        public func differs(from other: Item) -> Bool {
            isActive != other.isActive || expiresAt != other.expiresAt
        }
    }

    /// The entitlements, by identifier.
    public var items: [String: Item]
    /// When the answer changes by time alone next (an active entitlement's end, a scheduled
    /// grant's start): the tracker looks at the account again then.
    public var nextCheckAt: Date?

    public init(items: [String: Item] = [:], nextCheckAt: Date? = nil) {
        self.items = items
        self.nextCheckAt = nextCheckAt
    }

    /// The stored text (dates in milliseconds).
    package var storedText: String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = .sortedKeys
        // A dictionary of plain values: encoding cannot fail.
        return (try? String(decoding: encoder.encode(items), as: UTF8.self)) ?? "{}"
    }

    /// Reads a stored snapshot.
    ///
    /// - Throws: ``LedgerError/Code/corruptState`` when the text is not one.
    package init(storedText: String, nextCheckAt: Date?) throws(LedgerError) {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        do {
            items = try decoder.decode([String: Item].self, from: Data(storedText.utf8))
        } catch {
            throw LedgerError(.corruptState, reason: "a stored entitlement snapshot does not decode: \(error)")
        }
        self.nextCheckAt = nextCheckAt
    }
}

/// What the entitlement tracker commits at once: each account's new snapshot, the
/// `entitlement.changed` events, and the tracker's place in the stream.
public struct EntitlementChangeBatch: Sendable {
    /// The snapshots to store.
    public var snapshots: [AccountID: EntitlementSnapshot]
    /// The events to append.
    public var events: [LedgerEvent]
    /// The tracker's leased state and its new value (saved only while the caller holds it).
    public var placeName: String
    public var placeValue: String

    public init(snapshots: [AccountID: EntitlementSnapshot], events: [LedgerEvent], placeName: String, placeValue: String) {
        self.snapshots = snapshots
        self.events = events
        self.placeName = placeName
        self.placeValue = placeValue
    }
}
