import Foundation
import Hummingbird
import NIOCore
public import StoreGateAppStoreClient
public import StoreGateCore
import Synchronization

extension AppleStandIn {
    /// A receipt the stand-in knows, as Apple would know it.
    struct RegisteredReceipt {
        var environment: AppStoreEnvironment
        var reply: VerifyReceiptResponse
        var sharedSecret: String?
    }

    /// One verifyReceipt request as the stand-in received it.
    public struct VerifyReceiptCall: Sendable, Hashable {
        /// The endpoint asked: production or sandbox.
        public let environment: AppStoreEnvironment
        /// The `receipt-data` sent.
        public let receiptData: String?
        /// The `password` (shared secret) sent.
        public let password: String?
        /// The `exclude-old-transactions` flag sent.
        public let excludeOldTransactions: Bool?
        /// The `User-Agent` header sent.
        public var userAgent: String?
    }

    // MARK: Knobs

    /// Makes the stand-in know a receipt.
    ///
    /// Sent to its own environment's endpoint it answers `reply` (its `environment` set to
    /// that endpoint's); sent to the other one, 21007 (sandbox receipt at production) or 21008
    /// (production receipt at the sandbox). With a `sharedSecret`, a request without that
    /// `password` gets 21004.
    ///
    /// - Parameters:
    ///   - receiptData: The base64 `receipt-data` the client will send.
    ///   - environment: ``AppStoreEnvironment/production`` or ``AppStoreEnvironment/sandbox``.
    ///   - reply: What Apple would answer (status 0 unless set otherwise).
    ///   - sharedSecret: The password the receipt requires, if any.
    public func registerReceipt(_ receiptData: String, environment: AppStoreEnvironment, reply: VerifyReceiptResponse, sharedSecret: String? = nil) {
        var reply = reply
        reply.environment = environment
        state.withLock { $0.receipts[receiptData] = RegisteredReceipt(environment: environment, reply: reply, sharedSecret: sharedSecret) }
    }

    /// Answers every request to `environment`'s endpoint with `{"status": status}` (`nil` stops it).
    public func forceStatus(_ status: VerifyReceiptStatus?, for environment: AppStoreEnvironment) {
        state.withLock { $0.forcedStatus[environment] = status }
    }

    /// The "forged" mode of the 2012 attack: every verifyReceipt request, whatever it holds,
    /// gets `reply` (status 0 by default) from both endpoints. `nil` ends it.
    public func forge(_ reply: VerifyReceiptResponse?) {
        state.withLock { $0.forgedReply = reply }
    }

    /// Every verifyReceipt request received, in order.
    public var verifyReceiptCalls: [VerifyReceiptCall] {
        state.withLock { $0.verifyReceiptRequests }
    }

    // MARK: Routes

    func addVerifyReceiptRoutes(to router: Router<BasicRequestContext>) {
        for environment in [AppStoreEnvironment.production, .sandbox] {
            let path = RouterPath(stringLiteral: "/\(environment.rawValue.lowercased())/verifyReceipt")
            router.post(path) { request, _ in
                try await self.answerVerifyReceipt(request, environment: environment)
            }
            // Apple answers 21000 to anything but POST.
            router.get(path) { _, _ in
                AppleStandIn.json("{\"status\":21000}")
            }
        }
    }

    private func answerVerifyReceipt(_ request: Request, environment: AppStoreEnvironment) async throws -> Response {
        let route = "\(environment.rawValue.lowercased())/verifyReceipt"
        let buffer = try await request.body.collect(upTo: 4 << 20)
        var call = Self.parseCall(Array(buffer.readableBytesView), environment: environment)
        call.userAgent = request.headers[.userAgent]
        state.withLock { $0.verifyReceiptRequests.append(call) }
        if let failure = try await admit(.verifyReceipt, route: route) {
            return Self.response(for: failure)
        }
        let (forged, forced, registered) = state.withLock { state in
            (state.forgedReply, state.forcedStatus[environment], call.receiptData.flatMap { state.receipts[$0] })
        }
        if let forged {
            return Self.json(forged.jsonBytes())
        }
        if let forced {
            return Self.json("{\"status\":\(forced.rawValue),\"environment\":\"\(environment.rawValue)\"}")
        }
        guard call.receiptData != nil else {
            return Self.json("{\"status\":21002}")
        }
        guard let registered else {
            // Data Apple cannot decode as a receipt.
            return Self.json("{\"status\":21002}")
        }
        if registered.environment == .sandbox, environment == .production {
            return Self.json("{\"status\":21007}")
        }
        if registered.environment == .production, environment == .sandbox {
            return Self.json("{\"status\":21008}")
        }
        if let secret = registered.sharedSecret, call.password != secret {
            return Self.json("{\"status\":21004,\"environment\":\"\(environment.rawValue)\"}")
        }
        return Self.json(registered.reply.jsonBytes())
    }

    private static func parseCall(_ body: [UInt8], environment: AppStoreEnvironment) -> VerifyReceiptCall {
        struct Body: Decodable {
            let receiptData: String?
            let password: String?
            let excludeOldTransactions: Bool?
            enum CodingKeys: String, CodingKey {
                case receiptData = "receipt-data"
                case password
                case excludeOldTransactions = "exclude-old-transactions"
            }
        }
        do {
            let parsed = try JSONDecoder().decode(Body.self, from: Data(body))
            return VerifyReceiptCall(environment: environment, receiptData: parsed.receiptData, password: parsed.password, excludeOldTransactions: parsed.excludeOldTransactions)
        } catch {
            return VerifyReceiptCall(environment: environment, receiptData: nil, password: nil, excludeOldTransactions: nil)
        }
    }
}
