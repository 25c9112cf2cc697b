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
    private let headers: Mutex<BoundedCache<ExactBytes, JWSHeader>>

    init(capacity: Int = 64) {
        headers = Mutex(BoundedCache(capacity: capacity))
    }

    /// The header read before from exactly these bytes.
    func header(for segment: ExactBytes) -> JWSHeader? {
        headers.withLock { $0[segment] }
    }

    /// Keeps a header whose signature and chain held.
    func keep(_ header: JWSHeader, for segment: ExactBytes) {
        let key = segment.compacted()
        headers.withLock { $0.insert(header, for: key) }
    }

    /// How many headers are kept.
    var count: Int { headers.withLock { $0.count } }
}
