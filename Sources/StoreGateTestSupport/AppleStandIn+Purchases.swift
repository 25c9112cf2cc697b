public import Foundation
import Hummingbird
import StoreGateAppStoreClient
public import StoreGateCore
import Synchronization

/// The stand-in's Get App Transaction Info, Set App Account Token, Finish Transaction and the
/// renewal date extensions (single, mass, mass status), with Apple's validation and error codes.
extension AppleStandIn {
    /// One purchase as the stand-in's Server API knows it, keyed by its original transaction id.
    public struct PurchaseFixture: Sendable, Hashable {
        /// The product.
        public var productId: String
        /// Every transaction id of the purchase other than the original one (renewals).
        public var transactionIds: [String]
        /// Shared through Family Sharing (Apple refuses to set its token or extend it).
        public var isFamilyShared: Bool
        /// An auto-renewable subscription's current expiration; `nil` for other products.
        public var expiresDate: Date?
        /// The storefront (ISO 3166-1 alpha-3).
        public var storefront: String
        /// The subscription period's identifier.
        public var webOrderLineItemId: String?
        /// The `appAccountToken` Set App Account Token last set (lower case).
        public var appAccountToken: String?
        /// Renewal date extensions applied so far (Apple allows two a year).
        public var extensions: Int

        /// Creates a value from its parts.
        public init(
            productId: String, transactionIds: [String] = [], isFamilyShared: Bool = false, expiresDate: Date? = nil,
            storefront: String = "USA", webOrderLineItemId: String? = nil, appAccountToken: String? = nil, extensions: Int = 0
        ) {
            self.productId = productId
            self.transactionIds = transactionIds
            self.isFamilyShared = isFamilyShared
            self.expiresDate = expiresDate
            self.storefront = storefront
            self.webOrderLineItemId = webOrderLineItemId
            self.appAccountToken = appAccountToken
            self.extensions = extensions
        }
    }

    /// One Finish Transaction the stand-in accepted.
    public struct FinishedTransaction: Sendable, Hashable {
        /// The environment Apple names.
        public let environment: AppStoreEnvironment
        /// The transaction in the path.
        public let transactionId: String
    }

    struct MassExtensionRecord: Sendable {
        let productId: String
        let succeeded: Int
        let failed: Int
        var reads: Int
    }

    /// Every Finish Transaction accepted, in order.
    public var finishedTransactions: [FinishedTransaction] { state.withLock { $0.finishedTransactions } }

    /// The purchase `originalTransactionId` of `environment` as the stand-in holds it now.
    public func purchase(_ originalTransactionId: String, in environment: AppStoreEnvironment) -> PurchaseFixture? {
        state.withLock { $0.serverAPIData[environment]?.purchases[originalTransactionId] }
    }

    /// Apple allows this many renewal date extensions per subscription and year.
    static let maximumExtensions = 2

    func addPurchaseRoutes(to router: Router<BasicRequestContext>) {
        for environment in [AppStoreEnvironment.production, .sandbox] {
            let prefix = "/\(environment.rawValue.lowercased())/inApps"
            router.get(RouterPath(stringLiteral: prefix + "/v1/transactions/appTransactions/:id")) { request, context in
                try await self.serve(request, environment, "inApps/v1/transactions/appTransactions") { data, _ in
                    guard let id = context.parameters.get("id"), let signed = data.appTransactions[id] else {
                        return Self.response(for: .apiError(.appTransactionDoesNotExist, httpStatus: 404))
                    }
                    return Self.json(try JWSMinter.json(["signedAppTransactionInfo": signed]))
                }
            }
            router.put(RouterPath(stringLiteral: prefix + "/v1/transactions/:id/appAccountToken")) { request, context in
                try await self.serve(request, environment, "inApps/v1/transactions/appAccountToken") { data, body in
                    let id = context.parameters.get("id") ?? ""
                    guard let object = Self.object(body), let text = object["appAccountToken"] as? String, let token = UUID(uuidString: text) else {
                        return Self.response(for: .apiError(.invalidAppAccountTokenUUID, httpStatus: 400))
                    }
                    guard let purchase = data.purchases[id] else {
                        if data.purchases.values.contains(where: { $0.transactionIds.contains(id) }) {
                            return Self.response(for: .apiError(.transactionIdIsNotOriginalTransactionId, httpStatus: 400))
                        }
                        return Self.response(for: .apiError(.transactionIdNotFound, httpStatus: 404))
                    }
                    guard !purchase.isFamilyShared else { return Self.response(for: .apiError(.familyTransactionNotSupported, httpStatus: 400)) }
                    self.state.withLock { $0.serverAPIData[environment]?.purchases[id]?.appAccountToken = token.uuidString.lowercased() }
                    return Response(status: .ok)
                }
            }
            router.post(RouterPath(stringLiteral: prefix + "/v1/transactions/:id/finish")) { request, context in
                try await self.serve(request, environment, "inApps/v1/transactions/finish") { data, _ in
                    let id = context.parameters.get("id") ?? ""
                    guard !id.isEmpty, id.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                        return Self.response(for: .apiError(.invalidTransactionId, httpStatus: 400))
                    }
                    let known = data.transactions[id] != nil || data.purchases[id] != nil
                        || data.purchases.values.contains { $0.transactionIds.contains(id) }
                    guard known else { return Self.response(for: .apiError(.transactionIdNotFound, httpStatus: 404)) }
                    self.state.withLock { $0.finishedTransactions.append(FinishedTransaction(environment: environment, transactionId: id)) }
                    return Response(status: .ok)
                }
            }
            router.put(RouterPath(stringLiteral: prefix + "/v1/subscriptions/extend/:id")) { request, context in
                try await self.serve(request, environment, "inApps/v1/subscriptions/extend") { data, body in
                    let id = context.parameters.get("id") ?? ""
                    guard !id.isEmpty, id.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                        return Self.response(for: .apiError(.invalidOriginalTransactionId, httpStatus: 400))
                    }
                    let parsed: ExtensionBody
                    switch Self.extensionBody(body) {
                    case .success(let value): parsed = value
                    case .failure(let refusal): return Self.response(for: refusal.failure)
                    }
                    let key = "\(environment.rawValue)/\(id)/\(parsed.requestIdentifier)"
                    if let answered = self.state.withLock({ $0.extensionAnswers[key] }) {
                        return Self.json(answered)  // the same request again: Apple's first answer, nothing extended twice
                    }
                    guard let purchase = data.purchases[id] else {
                        return Self.response(for: .apiError(.originalTransactionIdNotFound, httpStatus: 404))
                    }
                    guard !purchase.isFamilyShared else {
                        return Self.response(for: .apiError(.familySharedSubscriptionExtensionIneligible, httpStatus: 403))
                    }
                    guard let expires = purchase.expiresDate, expires > Date() else {
                        return Self.response(for: .apiError(.subscriptionExtensionIneligible, httpStatus: 403))
                    }
                    guard purchase.extensions < Self.maximumExtensions else {
                        return Self.response(for: .apiError(.subscriptionMaxExtension, httpStatus: 403))
                    }
                    let effective = expires.addingTimeInterval(Double(parsed.days) * 86_400)
                    var answer: [String: Any] = ["originalTransactionId": id, "success": true, "effectiveDate": JWSPayloads.milliseconds(effective)]
                    if let line = purchase.webOrderLineItemId { answer["webOrderLineItemId"] = line }
                    let bytes = try JWSMinter.json(answer)
                    self.state.withLock { state in
                        state.serverAPIData[environment]?.purchases[id]?.expiresDate = effective
                        state.serverAPIData[environment]?.purchases[id]?.extensions += 1
                        state.extensionAnswers[key] = bytes
                    }
                    return Self.json(bytes)
                }
            }
            router.post(RouterPath(stringLiteral: prefix + "/v1/subscriptions/extend/mass")) { request, _ in
                try await self.serve(request, environment, "inApps/v1/subscriptions/extend/mass") { data, body in
                    let parsed: ExtensionBody
                    switch Self.extensionBody(body) {
                    case .success(let value): parsed = value
                    case .failure(let refusal): return Self.response(for: refusal.failure)
                    }
                    let object = Self.object(body) ?? [:]
                    guard let productId = object["productId"] as? String, !productId.isEmpty else {
                        return Self.response(for: .apiError(.invalidProductId, httpStatus: 400))
                    }
                    var storefronts: Set<String>?
                    if let codes = object["storefrontCountryCodes"] {
                        guard let list = codes as? [String], list.allSatisfy({ $0.count == 3 && $0.allSatisfy(\.isUppercase) }) else {
                            return Self.response(for: .apiError(.invalidStorefrontCountryCode, httpStatus: 400))
                        }
                        storefronts = Set(list)
                    }
                    let answer = try JWSMinter.json(["requestIdentifier": parsed.requestIdentifier])
                    let key = "\(environment.rawValue)/\(parsed.requestIdentifier)"
                    if self.state.withLock({ $0.massExtensions[key] != nil }) {
                        return Self.json(answer)  // acknowledged once, applied once
                    }
                    let now = Date()
                    var succeeded = 0
                    var failed = 0
                    var extended: [String: Date] = [:]
                    for (id, purchase) in data.purchases where purchase.productId == productId {
                        guard let expires = purchase.expiresDate, expires > now else { continue }  // active subscribers only
                        if let storefronts, !storefronts.contains(purchase.storefront) { continue }
                        if purchase.isFamilyShared || purchase.extensions >= Self.maximumExtensions {
                            failed += 1
                        } else {
                            succeeded += 1
                            extended[id] = expires.addingTimeInterval(Double(parsed.days) * 86_400)
                        }
                    }
                    self.state.withLock { state in
                        for (id, date) in extended {
                            state.serverAPIData[environment]?.purchases[id]?.expiresDate = date
                            state.serverAPIData[environment]?.purchases[id]?.extensions += 1
                        }
                        state.massExtensions[key] = MassExtensionRecord(productId: productId, succeeded: succeeded, failed: failed, reads: 0)
                    }
                    return Self.json(answer)
                }
            }
            router.get(RouterPath(stringLiteral: prefix + "/v1/subscriptions/extend/mass/:product/:request")) { request, context in
                try await self.serve(request, environment, "inApps/v1/subscriptions/extend/mass/status") { data, _ in
                    let product = context.parameters.get("product") ?? ""
                    let identifier = context.parameters.get("request") ?? ""
                    let key = "\(environment.rawValue)/\(identifier)"
                    let record = self.state.withLock { state -> MassExtensionRecord? in
                        guard var record = state.massExtensions[key], record.productId == product else { return nil }
                        record.reads += 1
                        state.massExtensions[key] = record
                        return record
                    }
                    guard let record else { return Self.response(for: .apiError(.statusRequestNotFound, httpStatus: 404)) }
                    var answer: [String: Any] = ["requestIdentifier": identifier, "complete": record.reads > data.massExtensionPendingReads]
                    if record.reads > data.massExtensionPendingReads {
                        answer["completeDate"] = JWSPayloads.milliseconds(Date())
                        answer["succeededCount"] = record.succeeded
                        answer["failedCount"] = record.failed
                    }
                    return Self.json(try JWSMinter.json(answer))
                }
            }
        }
    }

    /// The members both extension requests share, checked as Apple checks them.
    struct ExtensionBody {
        let days: Int
        let reason: Int
        let requestIdentifier: String
    }

    struct Refusal: Error {
        let failure: Failure
    }

    static func extensionBody(_ body: [UInt8]) -> Result<ExtensionBody, Refusal> {
        guard let object = object(body) else { return .failure(Refusal(failure: .apiError(.generalBadRequest, httpStatus: 400))) }
        guard let days = (object["extendByDays"] as? NSNumber)?.intValue, (1...90).contains(days) else {
            return .failure(Refusal(failure: .apiError(.invalidExtendByDays, httpStatus: 400)))
        }
        guard let reason = (object["extendReasonCode"] as? NSNumber)?.intValue, (0...3).contains(reason) else {
            return .failure(Refusal(failure: .apiError(.invalidExtendReasonCode, httpStatus: 400)))
        }
        guard let identifier = object["requestIdentifier"] as? String, !identifier.isEmpty, identifier.count <= 128 else {
            return .failure(Refusal(failure: .apiError(.invalidRequestIdentifier, httpStatus: 400)))
        }
        return .success(ExtensionBody(days: days, reason: reason, requestIdentifier: identifier))
    }

    /// A JSON object body, or `nil`.
    static func object(_ body: [UInt8]) -> [String: Any]? {
        guard !body.isEmpty, let parsed = try? JSONSerialization.jsonObject(with: Data(body)) else { return nil }
        return parsed as? [String: Any]
    }
}
