import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateTestSupport
import Testing

@Suite("retries, backoff and deadlines")
struct RetryAndDeadlineTests {
    @Test("transient HTTP failures are retried until the attempt bound, then reported", arguments: [500, 502, 503, 504])
    func boundedRetries(httpStatus: Int) async throws {
        try await withVerifyReceiptStandIn { standIn, client in
            standIn.failAlways(.verifyReceipt, with: .httpStatus(httpStatus))
            let error = await appStoreError { try await client.send(VerifyReceiptRequest(receiptData: "QQ==")) }
            #expect(error?.code == .httpStatus)
            #expect(error?.httpStatus == httpStatus)
            #expect(error?.attempts == quickRetries.maxAttempts)
            #expect(standIn.requestCount(.verifyReceipt) == quickRetries.maxAttempts)
        }
    }

    @Test("a failure that is not transient is not retried", arguments: [
        AppleStandIn.Failure.httpStatus(400),
        .httpStatus(403),
        .httpStatus(404),
        .malformedBody,
    ])
    func notRetried(failure: AppleStandIn.Failure) async throws {
        try await withVerifyReceiptStandIn { standIn, client in
            standIn.failAlways(.verifyReceipt, with: failure)
            let error = await appStoreError { try await client.send(VerifyReceiptRequest(receiptData: "QQ==")) }
            #expect(error != nil)
            #expect(error?.isRetryable == false)
            #expect(error?.attempts == 1)
            #expect(standIn.requestCount(.verifyReceipt) == 1)
        }
    }

    @Test("a call that fails twice and then succeeds returns the answer")
    func recovers() async throws {
        try await withVerifyReceiptStandIn { standIn, client in
            standIn.registerReceipt("UkVUUlk=", environment: .production, reply: sampleReply(environment: .production))
            standIn.failNext(1, of: .verifyReceipt, with: .httpStatus(503))
            standIn.failNext(1, of: .verifyReceipt, with: .status(.internalDataAccessError))
            let exchange = try await client.send(VerifyReceiptRequest(receiptData: "UkVUUlk="))
            #expect(exchange.reply.status == .valid)
            #expect(exchange.attempts == 3)
            #expect(standIn.requestCount(.verifyReceipt) == 3)
        }
    }

    // The two deadline tests leave wide margins: the suite shares two cores with every other
    // test, so a task may wait seconds for a thread. What they check holds at any speed: the
    // call ends at its deadline, long before the server answers or the attempts run out.

    @Test("a slow server is abandoned at the call's deadline")
    func deadlineDuringAttempt() async throws {
        let policy = RetryPolicy(maxAttempts: 5, initialBackoff: .milliseconds(5), attemptTimeout: .seconds(60), totalDeadline: .milliseconds(400))
        try await withVerifyReceiptStandIn(retryPolicy: policy) { standIn, client in
            standIn.setLatency(.seconds(90))
            let started = ContinuousClock.now
            let error = await appStoreError { try await client.send(VerifyReceiptRequest(receiptData: "QQ==")) }
            let elapsed = ContinuousClock.now - started
            #expect(error?.code == .deadlineExceeded)
            #expect(error?.attempts == 1)
            // Well before the server's 90 s and the attempt's 60 s timeout (CI's loaded machine
            // has starved this process's threads for 20 s).
            #expect(elapsed < .seconds(45))
            #expect(standIn.requestCount(.verifyReceipt) <= 1)
        }
    }

    @Test("retries stop when the next wait would pass the deadline, before the attempt bound")
    func deadlineBetweenAttempts() async throws {
        let policy = RetryPolicy(maxAttempts: 200, initialBackoff: .milliseconds(500), maxBackoff: .milliseconds(500), jitter: 0, attemptTimeout: .seconds(60), totalDeadline: .seconds(3))
        try await withVerifyReceiptStandIn(retryPolicy: policy) { standIn, client in
            standIn.failAlways(.verifyReceipt, with: .httpStatus(503))
            let started = ContinuousClock.now
            let error = await appStoreError { try await client.send(VerifyReceiptRequest(receiptData: "QQ==")) }
            let elapsed = ContinuousClock.now - started
            #expect(error?.code == .deadlineExceeded)
            let count = standIn.requestCount(.verifyReceipt)
            let attempts = try #require(error?.attempts)
            // 500 ms apart within 3 s: at most 7 attempts, far below the bound of 200. Every
            // attempt but an abandoned last one reached the server and was answered 503.
            #expect(attempts >= 1 && attempts <= 7)
            #expect(count >= attempts - 1 && count <= attempts)
            // The status is the last answered attempt's; when the deadline abandoned an attempt
            // in flight (a loaded machine), there is none to report.
            if let status = error?.httpStatus {
                #expect(status == 503)
            }
            // Far below the 100 s the attempt bound would take.
            #expect(elapsed < .seconds(45))
        }
    }

    @Test("one attempt's timeout ends that attempt, and the next one succeeds")
    func attemptTimeout() async throws {
        let policy = RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(5), attemptTimeout: .seconds(2), totalDeadline: .seconds(60))
        try await withVerifyReceiptStandIn(retryPolicy: policy) { standIn, client in
            standIn.registerReceipt("U0xPVw==", environment: .production, reply: sampleReply(environment: .production))
            standIn.setLatency(.seconds(90))
            let slow = await appStoreError { try await client.send(VerifyReceiptRequest(receiptData: "U0xPVw==")) }
            #expect(slow?.code == .timedOut)
            #expect(slow?.attempts == 3)
            standIn.setLatency(.zero)
            let exchange = try await client.send(VerifyReceiptRequest(receiptData: "U0xPVw=="))
            #expect(exchange.reply.status == .valid)
        }
    }

    @Test("backoff grows exponentially to its ceiling, and jitter only shortens it")
    func backoff() {
        let policy = RetryPolicy(initialBackoff: .milliseconds(100), maxBackoff: .milliseconds(1000), multiplier: 2, jitter: 0.5)
        #expect(policy.backoff(afterAttempt: 1) == .milliseconds(100))
        #expect(policy.backoff(afterAttempt: 2) == .milliseconds(200))
        #expect(policy.backoff(afterAttempt: 3) == .milliseconds(400))
        #expect(policy.backoff(afterAttempt: 5) == .milliseconds(1000))
        #expect(policy.backoff(afterAttempt: 40) == .milliseconds(1000))
        #expect(policy.jitteredBackoff(afterAttempt: 2, random: 0) == .milliseconds(200))
        #expect(policy.jitteredBackoff(afterAttempt: 2, random: 1) == .milliseconds(100))
    }

    @Test("Retry-After is read as UNIX milliseconds, seconds, or an HTTP date")
    func retryAfterParsing() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryAfter.parse("1700000005000", now: now) == Date(timeIntervalSince1970: 1_700_000_005))
        #expect(RetryAfter.parse("30", now: now) == now.addingTimeInterval(30))
        #expect(RetryAfter.parse("Tue, 14 Nov 2023 22:13:25 GMT", now: now) == Date(timeIntervalSince1970: 1_700_000_005))
        #expect(RetryAfter.parse("soon", now: now) == nil)
        #expect(RetryAfter.parse(nil, now: now) == nil)
        #expect(RetryAfter.parse("99999999999999999999999", now: now) == nil)
    }

    @Test("nothing listening is a retryable connection failure")
    func connectionRefused() async throws {
        // Find a free port, then close it.
        let port = try await AppleStandIn.run { $0.listeningPort }
        try await withTransport { transport in
            let client = VerifyReceiptClient(transport: transport, endpoints: VerifyReceiptEndpoints(standIn: "http://127.0.0.1:\(port)"), retryPolicy: quickRetries, logger: quietLogger)
            let error = await appStoreError { try await client.send(VerifyReceiptRequest(receiptData: "QQ==")) }
            #expect(error?.code == .connectionFailed || error?.code == .timedOut)
            #expect(error?.attempts == quickRetries.maxAttempts)
        }
    }
}
