import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateTestSupport
import Testing

@Suite("strict TLS")
struct TLSTests {
    @Test("a server whose certificate nothing trusts is refused, never retried, never reached")
    func untrusted() async throws {
        try await AppleStandIn.run(tls: true) { standIn in
            standIn.registerReceipt("VExT", environment: .production, reply: sampleReply(environment: .production))
            try await withTransport { transport in
                let client = VerifyReceiptClient(transport: transport, endpoints: standIn.verifyReceiptEndpoints, retryPolicy: quickRetries, logger: quietLogger)
                let error = await appStoreError { try await client.send(VerifyReceiptRequest(receiptData: "VExT")) }
                #expect(error?.code == .tlsFailure)
                #expect(error?.isRetryable == false)
                #expect(error?.attempts == 1)
                #expect(standIn.requestCount(.verifyReceipt) == 0)
            }
        }
    }

    @Test("the same server is reached once its certificate is trusted (the refusal is about trust)")
    func trusted() async throws {
        try await AppleStandIn.run(tls: true) { standIn in
            standIn.registerReceipt("VExT", environment: .production, reply: sampleReply(environment: .production))
            let certificate = try #require(standIn.certificateDER)
            try await withTransport(trusting: [certificate]) { transport in
                let client = VerifyReceiptClient(transport: transport, endpoints: standIn.verifyReceiptEndpoints, retryPolicy: quickRetries, logger: quietLogger)
                let accepted = try await client.verify(VerifyReceiptRequest(receiptData: "VExT"), expecting: coinsExpectation)
                #expect(accepted.environment == .production)
                #expect(standIn.requestCount(.verifyReceipt) == 1)
            }
        }
    }
}
