import StoreGateCore
import Synchronization

/// The headers of JWS a verifier accepted, by their exact base64url bytes.
///
/// Apple signs every JWS of one certificate chain under the same header (about 5 KB of
/// base64url, nearly all of it `x5c`), so a warm verification finds the header here instead
/// of decoding and reading it again. Reading a header is a pure function of its bytes, and
/// the memo decides nothing: the signature and the chain are checked as always. Only headers
/// whose signature and chain held are kept — a stream of forged headers cannot push out the
/// genuine ones — at most `capacity`, the oldest out first.
final class JWSHeaderMemo: Sendable {
    private struct State: ~Copyable {
        var headers: [ExactBytes: JWSHeader] = [:]
        var order: [ExactBytes] = []
    }

    private let state = Mutex(State())
    private let capacity: Int

    init(capacity: Int = 64) {
        self.capacity = max(1, capacity)
    }

    /// The header read before from exactly these bytes.
    func header(for segment: ExactBytes) -> JWSHeader? {
        state.withLock { $0.headers[segment] }
    }

    /// Keeps a header whose signature and chain held.
    func keep(_ header: JWSHeader, for segment: ExactBytes) {
        let key = segment.compacted()
        state.withLock { state in
            guard state.headers.updateValue(header, forKey: key) == nil else { return }
            state.order.append(key)
            if state.order.count > capacity {
                state.headers.removeValue(forKey: state.order.removeFirst())
            }
        }
    }

    /// How many headers are kept.
    var count: Int { state.withLock { $0.headers.count } }
}
