import Foundation
import FuzzSupport
import Logging
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateHTTP
import StoreGateReceipt

/// verifyReceipt reply decoding (`VerifyReceiptResponse.decode`: Apple's lenient spellings of
/// ids, quantities, booleans and millisecond dates, `latest_receipt_info` as array or object),
/// the reply-consistency check (`VerifyReceiptReplyVerifier`) against the whole receipt and
/// against the first purchase the reply names, and the client's routing (production → sandbox
/// on 21007, loops refused) over a transport that answers the input.
///
/// Round trip the code claims ("a reply written back in Apple's spelling reads the same"):
/// the JSON a decoded reply writes must decode, and write the same bytes again.
@main
enum App {
    static func main() {
        FuzzTarget.run { bytes in
            let reply: VerifyReceiptResponse
            do throws(AppStoreClientError) {
                reply = try VerifyReceiptResponse.decode(bytes)
            } catch {
                return
            }
            let written = reply.jsonBytes()
            do throws(AppStoreClientError) {
                let again = try VerifyReceiptResponse.decode(written)
                let rewritten = again.jsonBytes()
                FuzzTarget.require(
                    rewritten == written,
                    "a reply read back from its own JSON writes different JSON: \(FuzzTarget.difference(written, rewritten))")
            } catch {
                FuzzTarget.fail("the JSON a reply writes does not read back: \(error)")
            }

            let bundleId = reply.receipt?.bundleId ?? "com.example.app"
            let environments: Set<AppStoreEnvironment> = [.production, .sandbox]
            var expectations = [VerifyReceiptExpectation.wholeReceipt(bundleId: bundleId, environments: environments)]
            if let first = reply.receipt?.transactions.first, let transactionId = first.transactionId, let productId = first.productId {
                expectations.append(VerifyReceiptExpectation(
                    bundleId: bundleId,
                    purchase: .init(transactionId: transactionId, productId: productId, quantity: first.quantity ?? 1),
                    environments: environments))
            }
            let exchange = VerifyReceiptClient.Exchange(reply: reply, answeredBy: reply.environment ?? .production, route: [], attempts: 1)
            for expectation in expectations {
                do throws(AppStoreClientError) {
                    _ = try VerifyReceiptReplyVerifier.check(exchange, expecting: expectation)
                } catch {}
            }

            let client = VerifyReceiptClient(
                transport: AnsweringTransport(body: bytes), retryPolicy: .none,
                logger: Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() }))
            let expectation = expectations[expectations.count - 1]
            _ = runBlocking { () async -> Bool in
                do throws(AppStoreClientError) {
                    _ = try await client.verify(VerifyReceiptRequest(receipt: [0x30, 0x80]), expecting: expectation)
                    return true
                } catch {
                    return false
                }
            }
        }
    }
}

/// A transport whose every answer is `200 OK` with the fuzz input as body.
struct AnsweringTransport: HTTPTransport {
    let body: [UInt8]

    func send(_ request: TransportRequest, deadline: ContinuousClock.Instant) async throws(HTTPTransportError) -> TransportResponse {
        TransportResponse(status: 200, headers: [.init("Content-Type", "application/json")], body: body)
    }
}
