public import Foundation

/// The typed view of one leased state: its name and the `Codable` value a background job
/// keeps there, encoded as JSON.
///
/// Decoding is strict: a stored value that is not a `Value` is a
/// ``LedgerError/Code/corruptState`` error, never a silent reset to a default (which would
/// re-send answers, or skip work, without anyone knowing).
///
/// ```swift
/// let place = LeasedValue<Int64>("sync/first-sight")
/// if let leased = try await store.acquireLease(on: place, holder: me, now: now, lease: .seconds(120)) {
///     let sequence = try leased.value ?? 0        // nil until the first save
///     …
///     _ = try await store.save(place, sequence + 1, holder: me, now: now, lease: .seconds(120))
/// }
/// ```
public struct LeasedValue<Value: Codable & Sendable>: Sendable, Hashable {
    /// The state's name.
    public let name: String

    /// The leased state named `name`.
    public init(_ name: String) {
        self.name = name
    }

    /// The value stored in `state`, `nil` when none was saved yet.
    ///
    /// - Throws: ``LedgerError/Code/corruptState`` when the stored text is not a `Value`.
    public func value(of state: LeasedState) throws(LedgerError) -> Value? {
        guard let text = state.value else { return nil }
        return try Self.decode(text, name: state.name)
    }

    /// Decodes a stored text.
    ///
    /// - Throws: ``LedgerError/Code/corruptState``.
    public static func decode(_ text: String, name: String) throws(LedgerError) -> Value {
        do {
            return try JSONDecoder().decode(Value.self, from: Data(text.utf8))
        } catch {
            throw LedgerError(.corruptState, reason: "the leased state '\(name)' does not hold a \(Value.self): \(error)")
        }
    }

    /// The stored text of `value`.
    ///
    /// - Throws: ``LedgerError/Code/invalidArgument`` when the value cannot be encoded.
    public func encode(_ value: Value) throws(LedgerError) -> String {
        do {
            return String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        } catch {
            throw LedgerError(.invalidArgument, reason: "the leased state '\(name)' cannot encode its \(Value.self): \(error)")
        }
    }
}

/// A leased state held by the caller, with its decoded value.
public struct Leased<Value: Codable & Sendable>: Sendable {
    /// The state as stored.
    public let state: LeasedState
    /// The decoded value (`nil` before the first save); a stored value that does not decode
    /// is an error when read.
    public let value: Result<Value?, LedgerError>

    /// The decoded value.
    ///
    /// - Throws: ``LedgerError/Code/corruptState``.
    public func get() throws(LedgerError) -> Value? {
        try value.get()
    }
}

extension LeasedStateStore {
    /// Takes the lease on `key`'s state (see ``acquireLease(on:holder:now:lease:)``) and
    /// decodes its value.
    ///
    /// - Returns: The state and its value when the lease is `holder`'s; `nil` when another
    ///   holder has it.
    public func acquireLease<Value>(
        on key: LeasedValue<Value>, holder: String, now: Date, lease: Duration
    ) async throws(LedgerError) -> Leased<Value>? {
        guard let state = try await acquireLease(on: key.name, holder: holder, now: now, lease: lease) else { return nil }
        return Leased(state: state, value: Result { () throws(LedgerError) -> Value? in try key.value(of: state) })
    }

    /// Saves `value` as `key`'s state and renews the lease, if `holder` still holds it (see
    /// ``saveLeasedState(_:value:holder:now:lease:)``).
    ///
    /// - Returns: Whether it was saved (`false`: the lease was lost).
    public func save<Value>(
        _ key: LeasedValue<Value>, _ value: Value, holder: String, now: Date, lease: Duration
    ) async throws(LedgerError) -> Bool {
        try await saveLeasedState(key.name, value: key.encode(value), holder: holder, now: now, lease: lease)
    }

    /// Every state whose name starts with `prefix`, each with its value decoded as `Value`
    /// (a value that does not decode is a failed `Result`, so one bad entry never hides the
    /// others).
    public func leasedValues<Value: Codable & Sendable>(
        _ type: Value.Type, prefix: String
    ) async throws(LedgerError) -> [Leased<Value>] {
        try await leasedStates(prefix: prefix).map { state in
            Leased(state: state, value: Result { () throws(LedgerError) -> Value? in try LeasedValue<Value>(state.name).value(of: state) })
        }
    }
}
