public import Foundation
public import StoreGateLedger

/// Why a webhook endpoint is disabled: its receiver answered `410 Gone`, which the Standard
/// Webhooks specification reads as "stop sending". Kept in the ledger (a leased state named
/// `webhooks/disabled/<endpoint>`), so that it survives restarts and every instance sharing the
/// ledger stops; removed when an operator enables the endpoint again
/// (`POST /v1/webhooks/endpoints/{endpoint}/enable`).
public struct WebhookEndpointDisabling: Codable, Sendable, Hashable {
    /// When the 410 arrived, in milliseconds since 1970.
    public var disabledAt: Int64
    /// The status that disabled it (410).
    public var status: Int
    /// The sequence of the event whose delivery was answered 410.
    public var sequence: Int64
    /// That event's id.
    public var eventId: String
    /// The deliverer (instance) that received it.
    public var holder: String

    /// Creates a record.
    public init(disabledAt: Date, status: Int, sequence: Int64, eventId: String, holder: String) {
        self.disabledAt = Int64((disabledAt.timeIntervalSince1970 * 1000).rounded(.down))
        self.status = status
        self.sequence = sequence
        self.eventId = eventId
        self.holder = holder
    }

    /// ``disabledAt`` as a date.
    public var disabledDate: Date { Date(timeIntervalSince1970: TimeInterval(disabledAt) / 1000) }
}

/// Where a webhook endpoint stands: enabled, or disabled after a `410 Gone`.
public enum WebhookEndpointState: Sendable, Hashable {
    /// Deliveries go.
    case enabled
    /// Deliveries wait (pending) until an operator enables the endpoint again. `nil` when the
    /// stored record cannot be read (it still disables: fail closed).
    case disabled(WebhookEndpointDisabling?)

    /// Whether deliveries wait.
    public var isDisabled: Bool {
        if case .disabled = self { return true }
        return false
    }

    /// The prefix of every endpoint's state name.
    public static let statePrefix = "webhooks/disabled/"

    /// The leased state of `endpoint`: `webhooks/disabled/<endpoint>`.
    public static func state(of endpoint: String) -> LeasedValue<WebhookEndpointDisabling> {
        LeasedValue(statePrefix + endpoint)
    }

    /// How long a change of state holds the lease (it is released at once after).
    static let lease: Duration = .seconds(30)

    /// Every disabled endpoint, by name, read from `store` (every instance answers the same).
    /// A record that does not decode is `.disabled(nil)`: it still disables.
    public static func all(in store: any LeasedStateStore) async throws(LedgerError) -> [String: WebhookEndpointState] {
        var states: [String: WebhookEndpointState] = [:]
        for leased in try await store.leasedValues(WebhookEndpointDisabling.self, prefix: statePrefix) {
            let name = String(leased.state.name.dropFirst(statePrefix.count))
            switch leased.value {
            case .success(let disabling?): states[name] = .disabled(disabling)
            case .success(nil): continue  // taken but never saved: not disabled
            case .failure: states[name] = .disabled(nil)
            }
        }
        return states
    }

    /// The state of one endpoint.
    public static func of(_ endpoint: String, in store: any LeasedStateStore) async throws(LedgerError) -> WebhookEndpointState {
        let name = state(of: endpoint).name
        guard let stored = try await store.leasedStates(prefix: name).first(where: { $0.name == name }), stored.value != nil else {
            return .enabled
        }
        do throws(LedgerError) {
            return .disabled(try state(of: endpoint).value(of: stored))
        } catch {
            return .disabled(nil)
        }
    }

    /// Records that `endpoint` is disabled.
    ///
    /// - Returns: Whether it was recorded (`false`: another instance is changing the state
    ///   right now; the next `410` records it).
    @discardableResult
    public static func disable(
        _ endpoint: String, _ disabling: WebhookEndpointDisabling, in store: any LeasedStateStore, holder: String, now: Date
    ) async throws(LedgerError) -> Bool {
        let key = state(of: endpoint)
        guard try await store.acquireLease(on: key.name, holder: holder, now: now, lease: lease) != nil else { return false }
        let saved = try await store.save(key, disabling, holder: holder, now: now, lease: lease)
        try await store.releaseLease(on: key.name, holder: holder)
        return saved
    }

    /// What enabling an endpoint did.
    public enum Enabling: Sendable, Hashable {
        /// The endpoint is enabled; `wasDisabled` says whether it was disabled before.
        case enabled(wasDisabled: Bool)
        /// Another instance holds the state's lease (it is disabling the endpoint, or an
        /// instance died doing so and its lease has not run out): try again later.
        case busy(until: Date?)
    }

    /// Enables `endpoint` again: removes its record, so deliveries resume (on every instance
    /// within ``WebhookDeliveryPolicy/stateInterval``), each account's in order.
    public static func enable(_ endpoint: String, in store: any LeasedStateStore, holder: String, now: Date) async throws(LedgerError) -> Enabling {
        let key = state(of: endpoint)
        guard let taken = try await store.acquireLease(on: key.name, holder: holder, now: now, lease: lease) else {
            let current = try await store.leasedStates(prefix: key.name).first { $0.name == key.name }
            return .busy(until: current?.leaseUntil)
        }
        let wasDisabled = taken.value != nil
        guard try await store.removeLeasedState(key.name, holder: holder) else {
            return .busy(until: nil)
        }
        return .enabled(wasDisabled: wasDisabled)
    }
}
