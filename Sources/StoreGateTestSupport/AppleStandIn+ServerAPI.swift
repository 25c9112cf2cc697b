public import Crypto
import Foundation
import Hummingbird
import Logging
import NIOCore
public import StoreGateAppStoreClient
public import StoreGateCore
import Synchronization
import StoreGateHTTP

extension AppleStandIn {
    /// The In-App Purchase key the stand-in accepts, as App Store Connect knows it.
    public struct ServerAPIAccount: Sendable {
        /// The key id (`kid`).
        public var keyId: String
        /// The issuer id (`iss`).
        public var issuerId: String
        /// The bundle id Apple names.
        public var bundleId: String
        /// The public half of the key.
        public var publicKey: P256.Signing.PublicKey

        /// Creates a value from its parts.
        public init(keyId: String, issuerId: String, bundleId: String, publicKey: P256.Signing.PublicKey) {
            self.keyId = keyId
            self.issuerId = issuerId
            self.bundleId = bundleId
            self.publicKey = publicKey
        }

        /// A fresh key pair: the credentials a client signs with and the account that accepts them.
        public static func makeTestPair(
            bundleId: String = "com.example.storegate",
            keyId: String = "STANDIN01",
            issuerId: String = "57246542-96fe-1a63-e053-0824d011072a"
        ) -> (credentials: AppStoreServerAPICredentials, account: ServerAPIAccount) {
            let key = P256.Signing.PrivateKey()
            return (
                AppStoreServerAPICredentials(keyId: keyId, issuerId: issuerId, bundleId: bundleId, privateKey: key),
                ServerAPIAccount(keyId: keyId, issuerId: issuerId, bundleId: bundleId, publicKey: key.publicKey)
            )
        }
    }

    /// The `.p8` text (PKCS#8 PEM) of a test key pair's private key, for a test that writes it
    /// to a file (as `storegate appstore` reads it).
    public static func privateKeyPEM(of credentials: AppStoreServerAPICredentials) -> String {
        credentials.privateKey.pemRepresentation
    }

    /// Why the stand-in refused a Server API token (Apple answers a bare 401 to each).
    public enum AuthFailure: String, Sendable, Hashable {
        case missingToken = "missing_token"
        case malformed
        case algorithm
        case type
        case keyId = "key_id"
        case signature
        case issuer
        case audience
        case bundleId = "bundle_id"
        case issuedAtMissing = "issued_at_missing"
        case issuedInFuture = "issued_in_future"
        case expired
        case lifetimeTooLong = "lifetime_too_long"
    }

    /// One subscription of Get All Subscription Statuses.
    public struct SubscriptionFixture: Sendable, Hashable {
        /// The status Apple reports.
        public var status: Int
        /// The original transaction id.
        public var originalTransactionId: String
        /// The signed latest transaction.
        public var signedTransactionInfo: String
        /// The signed renewal info.
        public var signedRenewalInfo: String

        /// Creates a value from its parts.
        public init(status: Int, originalTransactionId: String, signedTransactionInfo: String, signedRenewalInfo: String) {
            self.status = status
            self.originalTransactionId = originalTransactionId
            self.signedTransactionInfo = signedTransactionInfo
            self.signedRenewalInfo = signedRenewalInfo
        }
    }

    /// What the Server API half knows about one environment. Signed payloads are stored as
    /// the compact JWS the stand-in answers (mint them with ``JWSMinter``).
    public struct ServerAPIData: Sendable {
        /// The bundle id Apple names.
        public var bundleId: String
        /// The app's App Store identifier.
        public var appAppleId: Int64?
        /// Get Transaction Info: transaction id → `signedTransactionInfo`.
        public var transactions: [String: String] = [:]
        /// Get Transaction History: transaction id → every signed transaction, in order.
        public var history: [String: [String]] = [:]
        /// Transactions per history page.
        public var historyPageSize = 20
        /// Get All Subscription Statuses: transaction id → groups (identifier → subscriptions).
        public var statuses: [String: [(group: String, subscriptions: [SubscriptionFixture])]] = [:]
        /// Look Up Order ID: order id → signed transactions (unknown orders answer status 1).
        public var orders: [String: [String]] = [:]
        /// Get Refund History: transaction id → refunded signed transactions.
        public var refunds: [String: [String]] = [:]
        /// Transactions per refund page.
        public var refundPageSize = 20
        /// Get Notification History: every `signedPayload`, in order; a request lists those whose
        /// `signedDate` is in its `startDate..<endDate`.
        public var notifications: [String] = []
        /// Notifications per page.
        public var notificationPageSize = 20
        /// The `signedPayload` Get Test Notification Status answers.
        public var testNotification: String?
        /// Get App Transaction Info: any transaction id of the customer (`transactionId`,
        /// `originalTransactionId` or `appTransactionId`) → `signedAppTransactionInfo`.
        public var appTransactions: [String: String] = [:]
        /// What Set App Account Token, Finish Transaction and the renewal date extensions act
        /// on, by original transaction id; the stand-in changes them as Apple would.
        public var purchases: [String: PurchaseFixture] = [:]
        /// Get Status of Subscription Renewal Date Extensions answers `complete: false` this
        /// many times for each request before it answers `complete: true`.
        public var massExtensionPendingReads = 1

        /// Creates a value from its parts.
        public init(bundleId: String, appAppleId: Int64? = nil) {
            self.bundleId = bundleId
            self.appAppleId = appAppleId
        }
    }

    /// One Server API request as the stand-in received it.
    public struct ServerAPICall: Sendable, Hashable {
        /// The environment Apple names.
        public let environment: AppStoreEnvironment
        /// The route without identifiers, such as `inApps/v2/history`.
        public let route: String
        /// The query parameters.
        public let query: [String: [String]]
        /// The request body.
        public let body: [UInt8]
        /// The HTTP method.
        public var method: String = "GET"
        /// The `User-Agent` header sent.
        public var userAgent: String?
    }

    // MARK: Knobs

    /// Accepts tokens signed for `account` (every Server API request is refused with 401
    /// until one is set).
    public func setServerAPIAccount(_ account: ServerAPIAccount) {
        state.withLock { $0.account = account }
    }

    /// Changes what the stand-in answers for `environment`.
    public func updateServerAPIData(_ environment: AppStoreEnvironment, bundleId: String, _ change: (inout ServerAPIData) -> Void) {
        state.withLock { state in
            var data = state.serverAPIData[environment] ?? ServerAPIData(bundleId: bundleId)
            change(&data)
            state.serverAPIData[environment] = data
        }
    }

    /// One Send Consumption Information the stand-in accepted.
    public struct ConsumptionCall: Sendable, Hashable {
        /// The environment Apple names.
        public let environment: AppStoreEnvironment
        /// The transaction in the path.
        public let transactionId: String
        /// The JSON body.
        public let body: [UInt8]
    }

    /// Every Send Consumption Information accepted, in order.
    public var consumptionRequests: [ConsumptionCall] { state.withLock { $0.consumptionRequests } }

    /// Every token refusal, in order.
    public var authFailures: [AuthFailure] { state.withLock { $0.authFailures } }

    /// Every Server API request received, in order.
    public var serverAPICalls: [ServerAPICall] { state.withLock { $0.serverAPIRequests } }

    // MARK: Routes

    func addServerAPIRoutes(to router: Router<BasicRequestContext>) {
        for environment in [AppStoreEnvironment.production, .sandbox] {
            let prefix = "/\(environment.rawValue.lowercased())/inApps"
            router.get(RouterPath(stringLiteral: prefix + "/v1/transactions/:id")) { request, context in
                try await self.serve(request, environment, "inApps/v1/transactions") { data, _ in
                    guard let id = context.parameters.get("id"), let signed = data.transactions[id] else {
                        return Self.response(for: .apiError(.transactionIdNotFound, httpStatus: 404))
                    }
                    return Self.json(try JWSMinter.json(["signedTransactionInfo": signed]))
                }
            }
            router.get(RouterPath(stringLiteral: prefix + "/v2/history/:id")) { request, context in
                try await self.serve(request, environment, "inApps/v2/history") { data, _ in
                    let all = context.parameters.get("id").flatMap { data.history[$0] } ?? []
                    return try Self.page(all, size: data.historyPageSize, token: request.uri.queryParameters.get("revision"), tokenName: "revision", data: data, environment: environment)
                }
            }
            router.get(RouterPath(stringLiteral: prefix + "/v1/subscriptions/:id")) { request, context in
                try await self.serve(request, environment, "inApps/v1/subscriptions") { data, _ in
                    guard let id = context.parameters.get("id"), let groups = data.statuses[id] else {
                        return Self.response(for: .apiError(.originalTransactionIdNotFound, httpStatus: 404))
                    }
                    var object: [String: Any] = ["environment": environment.rawValue, "bundleId": data.bundleId]
                    if let appAppleId = data.appAppleId { object["appAppleId"] = appAppleId }
                    object["data"] = groups.map { group in
                        [
                            "subscriptionGroupIdentifier": group.group,
                            "lastTransactions": group.subscriptions.map {
                                [
                                    "status": $0.status,
                                    "originalTransactionId": $0.originalTransactionId,
                                    "signedTransactionInfo": $0.signedTransactionInfo,
                                    "signedRenewalInfo": $0.signedRenewalInfo,
                                ] as [String: Any]
                            },
                        ] as [String: Any]
                    }
                    return Self.json(try JWSMinter.json(object))
                }
            }
            router.get(RouterPath(stringLiteral: prefix + "/v1/lookup/:id")) { request, context in
                try await self.serve(request, environment, "inApps/v1/lookup") { data, _ in
                    guard let id = context.parameters.get("id"), let signed = data.orders[id] else {
                        return Self.json("{\"status\":1}")
                    }
                    return Self.json(try JWSMinter.json(["status": 0, "signedTransactions": signed]))
                }
            }
            router.get(RouterPath(stringLiteral: prefix + "/v2/refund/lookup/:id")) { request, context in
                try await self.serve(request, environment, "inApps/v2/refund/lookup") { data, _ in
                    let all = context.parameters.get("id").flatMap { data.refunds[$0] } ?? []
                    return try Self.page(all, size: data.refundPageSize, token: request.uri.queryParameters.get("revision"), tokenName: "revision", data: nil, environment: environment)
                }
            }
            router.post(RouterPath(stringLiteral: prefix + "/v1/notifications/history")) { request, _ in
                try await self.serve(request, environment, "inApps/v1/notifications/history") { data, body in
                    // Apple's window: startDate <= signedDate < endDate, both required, at most 180
                    // days back in production and 30 in the sandbox.
                    guard let query = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
                          let startDate = (query["startDate"] as? NSNumber)?.int64Value,
                          let endDate = (query["endDate"] as? NSNumber)?.int64Value
                    else {
                        return Self.response(for: .apiError(.generalBadRequest, httpStatus: 400))
                    }
                    guard startDate < endDate else { return Self.response(for: .apiError(.startDateAfterEndDate, httpStatus: 400)) }
                    guard startDate >= JWSPayloads.milliseconds(Date()) - (environment == .sandbox ? 30 : 180) * 86_400_000 else {
                        return Self.response(for: .apiError(.startDateTooFarInPast, httpStatus: 400))
                    }
                    let token: String? = request.uri.queryParameters.get("paginationToken").map { String($0) }
                    if token != nil, self.state.withLock({ state -> Bool in
                        guard state.expiringPaginationTokens > 0 else { return false }
                        state.expiringPaginationTokens -= 1
                        return true
                    }) {
                        return Self.response(for: .apiError(.paginationTokenExpired, httpStatus: 400))
                    }
                    let listed = self.notifications(of: data, environment: environment, from: startDate, to: endDate)
                    let size = max(1, data.notificationPageSize)
                    let start: Int
                    if let token {
                        guard token.hasPrefix("p"), let offset = Int(token.dropFirst()), offset >= 0, offset <= listed.count else {
                            return Self.response(for: .apiError(.invalidPaginationToken, httpStatus: 400))
                        }
                        start = offset
                    } else {
                        start = 0
                    }
                    let end = min(listed.count, start + size)
                    return Self.json(Self.historyPage(listed[start..<end], next: end < listed.count ? "p\(end)" : nil))
                }
            }
            router.put(RouterPath(stringLiteral: prefix + "/v2/transactions/consumption/:id")) { request, context in
                try await self.serve(request, environment, "inApps/v2/transactions/consumption") { data, body in
                    // Apple's documented rules, checked on the JSON received (AppleStandIn+Consumption).
                    guard let id = context.parameters.get("id") else { return Self.response(for: .apiError(.invalidTransactionId, httpStatus: 400)) }
                    return self.answerConsumption(body, transactionId: id, data: data, environment: environment)
                }
            }
            router.post(RouterPath(stringLiteral: prefix + "/v1/notifications/test")) { request, _ in
                try await self.serve(request, environment, "inApps/v1/notifications/test") { data, _ in
                    let (number, url) = self.state.withLock { state -> (Int, String?) in
                        state.nextTestNotification += 1
                        return (state.nextTestNotification, state.notificationURLs[environment])
                    }
                    let token = "stand-in-test-\(number)_1700000000000"
                    if let url, let signed = data.testNotification {
                        // As Apple does: post it to the app's notification URL, and remember the attempt.
                        self.state.withLock { $0.testDeliveries[token] = [] }
                        Task { await self.deliverTestNotification(signed, to: url, token: token) }
                    }
                    return Self.json("{\"testNotificationToken\":\"\(token)\"}")
                }
            }
            router.get(RouterPath(stringLiteral: prefix + "/v1/notifications/test/:token")) { request, context in
                try await self.serve(request, environment, "inApps/v1/notifications/test/status") { data, _ in
                    guard let token = context.parameters.get("token"), token.hasPrefix("stand-in-test-"), let signed = data.testNotification else {
                        return Self.response(for: .apiError(.testNotificationNotFound, httpStatus: 404))
                    }
                    var attempts: [[String: Any]] = [["attemptDate": 1_700_000_000_000, "sendAttemptResult": "SUCCESS"]]
                    if let delivered = self.state.withLock({ $0.testDeliveries[token] }) {
                        // Delivered to a notification URL: what happened there (404 until the first attempt).
                        guard !delivered.isEmpty else { return Self.response(for: .apiError(.testNotificationNotFound, httpStatus: 404)) }
                        attempts = delivered.map { ["attemptDate": JWSPayloads.milliseconds($0.date), "sendAttemptResult": $0.result] }
                    }
                    return Self.json(try JWSMinter.json(["signedPayload": signed, "sendAttempts": attempts]))
                }
            }
        }
    }

    /// Where the stand-in posts the test notification of `environment` when one is requested
    /// (as Apple posts to the app's App Store Server Notifications URL); without one, Get Test
    /// Notification Status answers a canned success.
    public func setNotificationURL(_ url: String?, for environment: AppStoreEnvironment) {
        state.withLock { $0.notificationURLs[environment] = url }
    }

    /// Posts `{"signedPayload": …}` to `url` and records Apple's word for the outcome.
    private func deliverTestNotification(_ signed: String, to url: String, token: String) async {
        let transport = AsyncHTTPClientTransport(logger: Logger(label: "storegate.apple-stand-in", factory: { _ in SwiftLogNoOpLogHandler() }))
        let body = (try? JWSMinter.json(["signedPayload": signed])) ?? []
        var result = "NO_RESPONSE"
        do {
            let response = try await transport.send(
                TransportRequest(method: "POST", url: url, headers: [.init("Content-Type", "application/json")], body: body), deadline: .now + .seconds(10)
            )
            result = (200..<300).contains(response.status) ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
        } catch {
            result = error.code == .timedOut ? "TIMED_OUT" : "NO_RESPONSE"
        }
        try? await transport.shutdown()
        state.withLock { $0.testDeliveries[token, default: []].append((Date(), result)) }
    }

    /// The next `count` history requests that carry a pagination token are answered
    /// `PaginationTokenExpiredError` (4000017), as Apple does for a token kept too long.
    public func expirePaginationTokens(_ count: Int) {
        state.withLock { $0.expiringPaginationTokens += count }
    }

    /// The stored notifications whose `signedDate` is in `start..<end` (each payload's date is
    /// read once; each window's list is kept, so paging a long history stays linear).
    private func notifications(of data: ServerAPIData, environment: AppStoreEnvironment, from start: Int64, to end: Int64) -> [String] {
        state.withLock { state in
            let key = "\(environment.rawValue)/\(data.notifications.count)/\(start)/\(end)"
            if let cached = state.notificationWindows[key] { return cached }
            var listed: [String] = []
            for signed in data.notifications {
                let date: Int64
                if let known = state.notificationDates[signed] {
                    date = known
                } else {
                    date = Self.signedDate(of: signed) ?? 0
                    state.notificationDates[signed] = date
                }
                if date >= start, date < end { listed.append(signed) }
            }
            if state.notificationWindows.count > 64 { state.notificationWindows.removeAll() }
            state.notificationWindows[key] = listed
            return listed
        }
    }

    /// A Get Notification History page, written directly: each entry's payload is a compact
    /// JWS (base64url and dots, nothing to escape), and a general JSON writer spent most of the
    /// sync benchmark's time escaping them character by character. Anything else (a test's
    /// deliberately malformed payload) goes through JSONSerialization.
    static func historyPage(_ payloads: ArraySlice<String>, next: String?) -> [UInt8] {
        let jwsAlphabet = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.".utf8))
        var out: [UInt8] = Array("{\"notificationHistory\":[".utf8)
        for (index, payload) in payloads.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += Array("{\"signedPayload\":".utf8)
            if payload.utf8.allSatisfy(jwsAlphabet.contains) {
                out.append(UInt8(ascii: "\""))
                out += Array(payload.utf8)
                out.append(UInt8(ascii: "\""))
            } else {
                let quoted = (try? JSONSerialization.data(withJSONObject: [payload], options: [.withoutEscapingSlashes])).map { Array($0.dropFirst().dropLast()) }
                out += quoted ?? Array("null".utf8)
            }
            out += Array(",\"sendAttempts\":[{\"attemptDate\":1700000000000,\"sendAttemptResult\":\"SUCCESS\"}]}".utf8)
        }
        out += Array("],\"hasMore\":\(next != nil)".utf8)
        if let next { out += Array(",\"paginationToken\":\"\(next)\"".utf8) }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The `signedDate` of a compact JWS's payload, unverified (the stand-in's own index).
    static func signedDate(of compactJWS: String) -> Int64? {
        let parts = compactJWS.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64.decode(parts[1], mode: .url),
              let payload = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
        else { return nil }
        return (payload["signedDate"] as? NSNumber)?.int64Value
    }

    /// Checks the token, counts, injects failures, then answers with `answer`.
    func serve(
        _ request: Request,
        _ environment: AppStoreEnvironment,
        _ route: String,
        _ answer: (ServerAPIData, [UInt8]) async throws -> Response
    ) async throws -> Response {
        let body = Array(try await request.body.collect(upTo: 1 << 20).readableBytesView)
        var query: [String: [String]] = [:]
        for (name, value) in request.uri.queryParameters {
            query[String(name), default: []].append(String(value))
        }
        state.withLock {
            $0.serverAPIRequests.append(ServerAPICall(
                environment: environment, route: route, query: query, body: body,
                method: request.method.rawValue, userAgent: request.headers[.userAgent]
            ))
        }
        if let failure = try await admit(.serverAPI, route: "\(environment.rawValue.lowercased())/\(route)") {
            return Self.response(for: failure)
        }
        let (account, data) = state.withLock { ($0.account, $0.serverAPIData[environment]) }
        if let refusal = Self.checkToken(request.headers[.authorization], account: account, now: Date()) {
            state.withLock { $0.authFailures.append(refusal) }
            return Response(status: .unauthorized)
        }
        guard let data, let account, data.bundleId == account.bundleId else {
            return Self.response(for: .apiError(.appNotFound, httpStatus: 404))
        }
        return try await answer(data, body)
    }

    /// One page of a revision-paged list.
    private static func page(
        _ all: [String],
        size: Int,
        token: String?,
        tokenName: String,
        data: ServerAPIData?,
        environment: AppStoreEnvironment
    ) throws -> Response {
        let size = max(1, size)
        let start: Int
        if let token {
            guard token.hasPrefix("r"), let offset = Int(token.dropFirst()), offset >= 0, offset <= all.count else {
                return response(for: .apiError(.invalidRequestRevision, httpStatus: 400))
            }
            start = offset
        } else {
            start = 0
        }
        let end = min(all.count, start + size)
        var object: [String: Any] = [
            "signedTransactions": Array(all[start..<end]),
            "hasMore": end < all.count,
            tokenName: "r\(end)",
        ]
        if let data {
            object["bundleId"] = data.bundleId
            object["environment"] = environment.rawValue
            if let appAppleId = data.appAppleId { object["appAppleId"] = appAppleId }
        }
        return json(try JWSMinter.json(object))
    }

    /// Checks an `Authorization: Bearer` JWT as Apple documents it; `nil` when it is accepted.
    static func checkToken(_ header: String?, account: ServerAPIAccount?, now: Date) -> AuthFailure? {
        guard let header, header.hasPrefix("Bearer "), let account else { return .missingToken }
        let parts = header.dropFirst("Bearer ".count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Base64.decode(parts[0], mode: .url),
              let claimBytes = Base64.decode(parts[1], mode: .url),
              let signatureBytes = Base64.decode(parts[2], mode: .url),
              let jwtHeader = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
              let claims = (try? JSONSerialization.jsonObject(with: Data(claimBytes))) as? [String: Any]
        else { return .malformed }
        guard jwtHeader["alg"] as? String == "ES256" else { return .algorithm }
        guard jwtHeader["typ"] as? String == "JWT" else { return .type }
        guard jwtHeader["kid"] as? String == account.keyId else { return .keyId }
        let signingInput = Array((parts[0] + "." + parts[1]).utf8)
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
              account.publicKey.isValidSignature(signature, for: signingInput)
        else { return .signature }
        guard claims["iss"] as? String == account.issuerId else { return .issuer }
        guard claims["aud"] as? String == AppStoreServerAPIToken.audience else { return .audience }
        guard claims["bid"] as? String == account.bundleId else { return .bundleId }
        guard let iat = (claims["iat"] as? NSNumber)?.int64Value, let exp = (claims["exp"] as? NSNumber)?.int64Value else {
            return .issuedAtMissing
        }
        let nowSeconds = Int64(now.timeIntervalSince1970)
        guard iat <= nowSeconds + 60 else { return .issuedInFuture }
        guard exp > nowSeconds else { return .expired }
        guard exp - iat <= 3600 else { return .lifetimeTooLong }
        return nil
    }
}
