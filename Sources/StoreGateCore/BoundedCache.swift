/// A map that keeps at most `capacity` entries, the oldest inserted out first: the chain cache's
/// and the JWS header memo's storage (each behind its owner's lock).
package struct BoundedCache<Key: Hashable, Value> {
    package let capacity: Int
    private var entries: [Key: Value] = [:]
    private var order: [Key] = []

    /// - Parameter capacity: The most entries kept (at least 1).
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    package subscript(key: Key) -> Value? {
        entries[key]
    }

    package var count: Int { entries.count }

    /// Stores `value` under `key` (replacing a value stored there, which keeps its place in
    /// the order); a new key past the capacity pushes out the oldest.
    package mutating func insert(_ value: Value, for key: Key) {
        guard entries.updateValue(value, forKey: key) == nil else { return }
        order.append(key)
        if order.count > capacity {
            entries.removeValue(forKey: order.removeFirst())
        }
    }

    package mutating func removeAll() {
        entries.removeAll()
        order.removeAll()
    }
}

extension BoundedCache: Sendable where Key: Sendable, Value: Sendable {}
