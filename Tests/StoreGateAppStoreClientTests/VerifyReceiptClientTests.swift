import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateTestSupport
import Testing

@Suite("verifyReceipt client against the stand-in")
struct VerifyReceiptClientTests {
    @Test("a sandbox receipt sent to production is sent again to the sandbox (21007)")
    func productionToSandbox() async throws {
        try await withVerifyReceiptStandIn { standIn, client in
            standIn.registerReceipt("U0FOREJPWA==", environment: .sandbox, reply: sampleReply(environment: .sandbox))
            let accepted = try await client.verify(VerifyReceiptRequest(receiptData: "U0FOREJPWA=="), expecting: coinsExpectation)
            #expect(accepted.environment == .sandbox)
            #expect(accepted.outcome == .valid)
            #expect(accepted.route.map(\.environment) == [.production, .sandbox])
            #expect(accepted.route.map(\.status) == [.sandboxReceiptSentToProduction, .valid])
            #expect(standIn.verifyReceiptCalls.map(\.environment) == [.production, .sandbox])
        }
    }

    @Test("a production receipt sent to the sandbox first is sent again to production (21008)")
    func sandboxToProduction() async throws {
        try await withVerifyReceiptStandIn { standIn, client in
            standIn.registerReceipt("UFJPRA==", environment: .production, reply: sampleReply(environment: .production))
            let accepted = try await client.verify(VerifyReceiptRequest(receiptData: "UFJPRA=="), expecting: coinsExpectation, startingWith: .sandbox)
            #expect(accepted.environment == .production)
            #expect(accepted.route.map(\.status) == [.productionReceiptSentToSandbox, .valid])
            #expect(standIn.verifyReceiptCalls.map(\.environment) == [.sandbox, .production])
        }
    }

    @Test("a production receipt asked at production goes nowhere else")
    func productionDirect() async throws {
        try await withVerifyReceiptStandIn { standIn, client in
            standIn.registerReceipt("UFJPRA==", environment: .production, reply: sampleReply(environment: .production))
            let accepted = try await client.verify(VerifyReceiptRequest(receiptData: "UFJPRA=="), expecting: coinsExpectation)
            #expect(accepted.route.map(\.environment) == [.production])
            #expect(standIn.requestCount(.verifyReceipt) == 1)
        }
    }

    @Test("endpoints sending the receipt back and forth end in a routing loop error, each asked once")
    func routingLoop() async throws {
        try await withVerifyReceiptStandIn { standIn, client in
            standIn.forceStatus(.sandboxReceiptSentToProduction, for: .production)
            standIn.forceStatus(.productionReceiptSentToSandbox, for: .sandbox)
            let error = await appStoreError { try await client.send(VerifyReceiptRequest(receiptData: "eA==")) }
            #expect(error?.code == .routingLoop)
            #expect(standIn.requestCount(.verifyReceipt, route: "production/verifyReceipt") == 1)
            #expect(standIn.requestCount(.verifyReceipt, route: "sandbox/verifyReceipt") == 1)
        }
    }

    @Test("the shared secret and exclude-old-transactions reach Apple", arguments: [true, false])
    func requestFields(excludeOld: Bool) async throws {
        try await withVerifyReceiptStandIn { standIn, client in
            standIn.registerReceipt("U0VDUkVU", environment: .production, reply: sampleReply(environment: .production), sharedSecret: "hunter2")
            _ = try await client.verify(
                VerifyReceiptRequest(receiptData: "U0VDUkVU", sharedSecret: SharedSecret("hunter2"), excludeOldTransactions: excludeOld),
                expecting: coinsExpectation
            )
            let call = try #require(standIn.verifyReceiptCalls.first)
            #expect(call.receiptData == "U0VDUkVU")
            #expect(call.password == "hunter2")
            #expect(call.excludeOldTransactions == excludeOld)
        }
    }

    @Test("a wrong shared secret is status 21004, not retried")
    func wrongSecret() async throws {
        try await withVerifyReceiptStandIn { standIn, client in
            standIn.registerReceipt("U0VDUkVU", environment: .production, reply: sampleReply(environment: .production), sharedSecret: "hunter2")
            let error = await appStoreError {
                try await client.verify(VerifyReceiptRequest(receiptData: "U0VDUkVU", sharedSecret: SharedSecret("guess")), expecting: coinsExpectation)
            }
            #expect(error?.code == .replyStatus)
            #expect(error?.status == .sharedSecretMismatch)
            #expect(standIn.requestCount(.verifyReceipt) == 1)
        }
    }

    @Test("an empty receipt is refused before any request")
    func emptyReceipt() async throws {
        try await withVerifyReceiptStandIn { standIn, client in
            let error = await appStoreError { try await client.send(VerifyReceiptRequest(receiptData: "")) }
            #expect(error?.code == .invalidRequest)
            #expect(standIn.requestCount(.verifyReceipt) == 0)
        }
    }

    /// What the client does with each documented status answered by production.
    @Test("every documented status answered by production is handled as Apple documents it", arguments: VerifyReceiptStatus.documented)
    func everyStatus(status: VerifyReceiptStatus) async throws {
        let policy = RetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(2), attemptTimeout: .seconds(60), totalDeadline: .seconds(120))
        try await withVerifyReceiptStandIn(retryPolicy: policy) { standIn, client in
            standIn.forceStatus(status, for: .production)
            let result: Result<VerifyReceiptClient.Exchange, AppStoreClientError>
            do throws(AppStoreClientError) {
                result = .success(try await client.send(VerifyReceiptRequest(receiptData: "QU5Z")))
            } catch {
                result = .failure(error)
            }
            switch status {
            case .valid, .subscriptionExpired:
                // A bare status is not a receipt: the reply check refuses it.
                let exchange = try result.get()
                #expect(exchange.reply.status == status)
                #expect(throws: AppStoreClientError(.missingReceipt, reason: "")) {
                    try VerifyReceiptReplyVerifier.check(exchange, expecting: coinsExpectation)
                }
            case .sandboxReceiptSentToProduction:
                // Sent on to the sandbox, which does not know the data (21002).
                let exchange = try result.get()
                #expect(exchange.route.map(\.environment) == [.production, .sandbox])
                #expect(exchange.reply.status == .malformedReceiptData)
            case _ where status.isRetryable:
                let error = try #require(result.failure)
                #expect(error.code == .replyStatus)
                #expect(error.status == status)
                #expect(error.isRetryable)
                #expect(error.attempts == 2)
                #expect(standIn.requestCount(.verifyReceipt) == 2)
            default:
                let exchange = try result.get()
                #expect(exchange.reply.status == status)
                #expect(exchange.attempts == 1)
                #expect(standIn.requestCount(.verifyReceipt) == 1)
                let error = try #require(checkFailure(exchange))
                #expect(error.code == .replyStatus)
                #expect(error.status == status)
                #expect(!error.isRetryable)
            }
        }
    }

    private func checkFailure(_ exchange: VerifyReceiptClient.Exchange) -> AppStoreClientError? {
        do {
            _ = try VerifyReceiptReplyVerifier.check(exchange, expecting: coinsExpectation)
            return nil
        } catch {
            return error
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
