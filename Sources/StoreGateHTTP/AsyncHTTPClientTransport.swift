import AsyncHTTPClient
public import Logging
import NIOCore
import NIOHTTP1
import NIOSSL

/// The production ``HTTPTransport``: AsyncHTTPClient with strict TLS.
///
/// Certificates are always verified in full (chain to the system trust store and host name);
/// TLS 1.2 is the minimum; redirects are not followed (Apple's endpoints never redirect, a
/// webhook receiver must answer itself, and a redirect is how a man in the middle would send
/// the call elsewhere). There is no switch to turn certificate checks off. Call ``shutdown()`` when done.
public final class AsyncHTTPClientTransport: HTTPTransport {
    /// Limits of one attempt.
    public struct Configuration: Sendable, Hashable {
        /// How long establishing a connection (TCP and TLS) may take.
        public var connectTimeout: Duration
        /// How long the server may stay silent while answering.
        public var readTimeout: Duration
        /// The largest answer body accepted, in bytes.
        public var maxResponseBytes: Int

        /// Creates a value from its parts.
        public init(connectTimeout: Duration = .seconds(10), readTimeout: Duration = .seconds(30), maxResponseBytes: Int = 8 << 20) {
            self.connectTimeout = connectTimeout
            self.readTimeout = readTimeout
            self.maxResponseBytes = maxResponseBytes
        }
    }

    private let client: HTTPClient
    private let configuration: Configuration
    private let logger: Logger

    /// Creates a transport that trusts exactly the system trust store.
    public convenience init(configuration: Configuration = Configuration(), logger: Logger) {
        self.init(configuration: configuration, tls: Self.strictTLS(), logger: logger)
    }

    /// Creates a transport that also trusts the given DER root certificates, on top of the
    /// system trust store, with verification still in full. For tests that run a local TLS
    /// stand-in; not public API.
    package convenience init(configuration: Configuration, additionalTrustRootsDER: [[UInt8]], logger: Logger) throws {
        var tls = Self.strictTLS()
        tls.additionalTrustRoots = [.certificates(try additionalTrustRootsDER.map { try NIOSSLCertificate(bytes: $0, format: .der) })]
        self.init(configuration: configuration, tls: tls, logger: logger)
    }

    private static func strictTLS() -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        tls.minimumTLSVersion = .tlsv12
        return tls
    }

    private init(configuration: Configuration, tls: TLSConfiguration, logger: Logger) {
        let timeout = HTTPClient.Configuration.Timeout(
            connect: Self.timeAmount(configuration.connectTimeout),
            read: Self.timeAmount(configuration.readTimeout)
        )
        var clientConfiguration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            redirectConfiguration: .disallow,
            timeout: timeout,
            decompression: .disabled
        )
        clientConfiguration.httpVersion = .automatic
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        self.configuration = configuration
        self.logger = logger
    }

    /// Closes every connection. The transport cannot be used afterwards.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// Sends one request; see ``HTTPTransport/send(_:deadline:)``.
    public func send(_ request: TransportRequest, deadline: ContinuousClock.Instant) async throws(HTTPTransportError) -> TransportResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for header in request.headers {
            outgoing.headers.add(name: header.name, value: header.value)
        }
        if let body = request.body {
            outgoing.body = .bytes(body)
        }
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else {
            throw HTTPTransportError(.timedOut, reason: "no time left for the request")
        }
        let nioDeadline = NIODeadline.now() + Self.timeAmount(remaining)
        do {
            let response = try await client.execute(outgoing, deadline: nioDeadline, logger: logger)
            let buffer = try await response.body.collect(upTo: configuration.maxResponseBytes)
            var headers: [TransportRequest.Header] = []
            for (name, value) in response.headers {
                headers.append(.init(name, value))
            }
            return TransportResponse(status: Int(response.status.code), headers: headers, body: Array(buffer.readableBytesView))
        } catch {
            throw Self.map(error)
        }
    }

    /// Maps AsyncHTTPClient, NIO and NIOSSL errors onto ``HTTPTransportError``'s codes.
    static func map(_ error: any Error) -> HTTPTransportError {
        switch error {
        case is CancellationError:
            return HTTPTransportError(.cancelled, reason: "the call was cancelled")
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            return HTTPTransportError(.tlsFailure, reason: "TLS handshake failed: \(error)")
        case is NIOTooManyBytesError:
            return HTTPTransportError(.responseTooLarge, reason: "the answer exceeds the size limit")
        case let error as HTTPClientError:
            switch error {
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout:
                return HTTPTransportError(.timedOut, reason: "the request timed out (\(error))")
            case .cancelled:
                return HTTPTransportError(.cancelled, reason: "the call was cancelled")
            case .invalidURL, .emptyHost, .emptyScheme, .missingSocketPath:
                return HTTPTransportError(.invalidRequest, reason: "the request URL is not usable (\(error))")
            default:
                return HTTPTransportError(.connectionFailed, reason: "HTTP client error: \(error)")
            }
        default:
            return HTTPTransportError(.connectionFailed, reason: "connection failed: \(error)")
        }
    }

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        let nanos = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanos.overflow else { return .nanoseconds(Int64.max) }
        return .nanoseconds(max(0, nanos.partialValue + attoseconds / 1_000_000_000))
    }
}
