import Crypto
import Foundation
import FuzzSupport
import Logging
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateHTTP
import StoreGateSignedData

/// What the App Store Server API fuzz targets (`fuzz-server-api`, `fuzz-server-api-actions`)
/// share: clients for the sandbox whose transport answers every request with one status and
/// the fuzz input as body, without retries, their signed payloads verified with the test CA's
/// root as an opt-in anchor at a fixed time. A target of its own, so that the fuzzers that
/// read no HTTP answer do not link the clients.
public struct ServerAPIFuzzClients {
    /// The app the clients are for.
    public static let bundleId = "com.example.storegate"
    /// The clients' clock, and the signed payloads' verification time.
    public static let now = Date(timeIntervalSince1970: 1_700_000_000)

    private let tokens: AppStoreServerAPITokenProvider
    private let verifier: SignedDataPayloadVerifier

    /// Creates a fresh signing key and the test CA's verifier.
    public init() {
        let credentials = AppStoreServerAPICredentials(
            keyId: "FUZZKEY001", issuerId: "00000000-0000-0000-0000-000000000000", bundleId: Self.bundleId,
            privateKey: P256.Signing.PrivateKey())
        self.tokens = AppStoreServerAPITokenProvider(credentials: credentials)
        self.verifier = SignedDataPayloadVerifier(SignedDataVerifier(
            expectations: SignedDataExpectations(bundleId: Self.bundleId, environments: [.production, .sandbox, .xcode, .localTesting, .test]),
            chainVerifier: CertificateChainVerifier(trustStore: FuzzFiles.testTrustStore()),
            clock: { Self.now }))
    }

    /// A client whose every answer has `status` and `body`; a client that cannot be made
    /// fails the run.
    public func client(status: Int, body: [UInt8]) -> AppStoreServerAPIClient {
        do throws(AppStoreClientError) {
            return try AppStoreServerAPIClient(
                tokens: tokens, environment: .sandbox,
                transport: AnsweringTransport(status: status, body: body),
                verifier: verifier, retryPolicy: .none,
                logger: Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() }),
                now: { Self.now })
        } catch {
            FuzzTarget.fail("the client cannot be made: \(error)")
        }
    }
}

/// A transport whose every answer has the given status and the fuzz input as body.
struct AnsweringTransport: HTTPTransport {
    let status: Int
    let body: [UInt8]

    func send(_ request: TransportRequest, deadline: ContinuousClock.Instant) async throws(HTTPTransportError) -> TransportResponse {
        TransportResponse(status: status, headers: [.init("Content-Type", "application/json")], body: body)
    }
}
