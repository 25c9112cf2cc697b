import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateHTTP
import StoreGateTestSupport

/// A stand-in whose Server API accepts a fresh test key, and a client signing with it.
struct ServerAPIFixture: Sendable {
    let standIn: AppleStandIn
    let client: AppStoreServerAPIClient
    let payloads: SignedPayloads
    let credentials: AppStoreServerAPICredentials
    let transport: AsyncHTTPClientTransport

    func setData(_ change: (inout AppleStandIn.ServerAPIData) -> Void) {
        standIn.updateServerAPIData(.sandbox, bundleId: appBundleId, change)
    }
}

func withServerAPI<T: Sendable>(
    retryPolicy: RetryPolicy = quickRetries,
    clientCredentials: AppStoreServerAPICredentials? = nil,
    verifier: (any SignedPayloadVerifying)? = nil,
    _ body: @Sendable (ServerAPIFixture) async throws -> T
) async throws -> T {
    let (credentials, account) = AppleStandIn.ServerAPIAccount.makeTestPair(bundleId: appBundleId)
    let payloads = try SignedPayloads()
    let verifier = try verifier ?? payloads.verifier()
    return try await AppleStandIn.run { standIn in
        standIn.setServerAPIAccount(account)
        standIn.updateServerAPIData(.sandbox, bundleId: appBundleId) { _ in }
        return try await withTransport { transport in
            let client = try AppStoreServerAPIClient(
                tokens: AppStoreServerAPITokenProvider(credentials: clientCredentials ?? credentials),
                environment: .sandbox,
                endpoints: standIn.serverAPIEndpoints,
                transport: transport,
                verifier: verifier,
                retryPolicy: retryPolicy,
                logger: quietLogger
            )
            return try await body(ServerAPIFixture(standIn: standIn, client: client, payloads: payloads, credentials: credentials, transport: transport))
        }
    }
}
