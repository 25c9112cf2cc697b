import Foundation
public import StoreGateCore
public import StoreGateReceipt

/// A verifyReceipt reply, decoded but not yet believed.
///
/// Anything can answer an HTTP request with `{"status": 0}`: a reply becomes evidence only
/// after ``VerifyReceiptReplyVerifier`` has checked it against the purchase being verified.
/// Unknown keys are ignored; fields Apple spells as strings or numbers are read either way.
public struct VerifyReceiptResponse: Sendable, Hashable, Codable {
    /// The status Apple answered.
    public var status: VerifyReceiptStatus
    /// `Production` or `Sandbox`, as the reply names it.
    public var environment: AppStoreEnvironment?
    /// Apple's decoding of the receipt that was sent; absent for most error statuses.
    public var receipt: VerifyReceiptReceipt?
    /// The latest renewal transactions of the customer's subscriptions.
    public var latestReceiptInfo: [VerifyReceiptTransaction]
    /// Pending renewal state per subscription.
    public var pendingRenewalInfo: [VerifyReceiptPendingRenewal]
    /// The latest base64 receipt (auto-renewable subscriptions only). Never logged.
    public var latestReceipt: String?
    /// Apple's own `is-retryable` hint, sent with 21100–21199.
    public var isRetryableHint: Bool?

    /// Creates a value from its parts.
    public init(
        status: VerifyReceiptStatus,
        environment: AppStoreEnvironment? = nil,
        receipt: VerifyReceiptReceipt? = nil,
        latestReceiptInfo: [VerifyReceiptTransaction] = [],
        pendingRenewalInfo: [VerifyReceiptPendingRenewal] = [],
        latestReceipt: String? = nil,
        isRetryableHint: Bool? = nil
    ) {
        self.status = status
        self.environment = environment
        self.receipt = receipt
        self.latestReceiptInfo = latestReceiptInfo
        self.pendingRenewalInfo = pendingRenewalInfo
        self.latestReceipt = latestReceipt
        self.isRetryableHint = isRetryableHint
    }

    /// Encodes the reply in Apple's spelling, as ``jsonBytes()`` writes it.
    public func encode(to encoder: any Encoder) throws {
        try encodeAsWritten(to: encoder)
    }

    /// The reply as JSON in Apple's spelling and member order (what a stand-in for Apple, and
    /// the service's `/verifyReceipt` drop-in, answer): the receipt and purchases as
    /// ``VerifyReceiptReceipt`` and ``VerifyReceiptTransaction`` write them.
    public func jsonBytes() -> [UInt8] {
        JSONWriter.encode(self, capacity: 4096)
    }

    /// Decodes a reply as Apple spells it, leniently (see the type's discussion).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        guard let status = try c.lenientInt("status") else {
            throw DecodingError.keyNotFound(AnyKey("status"), .init(codingPath: c.codingPath, debugDescription: "a verifyReceipt reply always has a status"))
        }
        self.status = VerifyReceiptStatus(rawValue: status)
        environment = try c.lenientString("environment").map(AppStoreEnvironment.init(rawValue:))
        receipt = try c.decodeIfPresent(VerifyReceiptReceipt.self, forKey: AnyKey("receipt"))
        latestReceiptInfo = try Self.transactions(c, "latest_receipt_info")
        pendingRenewalInfo = try c.decodeIfPresent([VerifyReceiptPendingRenewal].self, forKey: AnyKey("pending_renewal_info")) ?? []
        latestReceipt = try c.lenientString("latest_receipt")
        isRetryableHint = try c.lenientBool("is-retryable")
    }

    /// `latest_receipt_info` is an array for app receipts and one object for iOS 6-style receipts.
    private static func transactions(_ c: KeyedDecodingContainer<AnyKey>, _ name: String) throws -> [VerifyReceiptTransaction] {
        let key = AnyKey(name)
        guard c.contains(key), try !c.decodeNil(forKey: key) else { return [] }
        if let array = try? c.decode([VerifyReceiptTransaction].self, forKey: key) { return array }
        return [try c.decode(VerifyReceiptTransaction.self, forKey: key)]
    }

    /// Decodes a reply body.
    ///
    /// - Throws: ``AppStoreClientError/Code/malformedReply`` naming the field that is wrong.
    public static func decode(_ body: [UInt8]) throws(AppStoreClientError) -> VerifyReceiptResponse {
        do {
            return try JSONDecoder().decode(VerifyReceiptResponse.self, from: Data(body))
        } catch let error as DecodingError {
            throw AppStoreClientError(.malformedReply, reason: "verifyReceipt reply: \(DecodingErrorSummary(error))")
        } catch {
            throw AppStoreClientError(.malformedReply, reason: "verifyReceipt reply is not JSON")
        }
    }
}

extension VerifyReceiptResponse: JSONWritable {
    /// `status`, `environment`, `receipt`, `latest_receipt_info`, `pending_renewal_info`,
    /// `latest_receipt` and `is-retryable`, each only when present (empty lists left out).
    package func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("status", status.rawValue)
            json.member("environment", environment?.rawValue)
            json.member("receipt", receipt)
            if !latestReceiptInfo.isEmpty { json.member("latest_receipt_info", latestReceiptInfo) }
            if !pendingRenewalInfo.isEmpty { json.member("pending_renewal_info", pendingRenewalInfo) }
            json.member("latest_receipt", latestReceipt)
            json.member("is-retryable", isRetryableHint)
        }
    }
}

/// Names the field a `DecodingError` is about, without quoting any value.
struct DecodingErrorSummary: CustomStringConvertible {
    let error: DecodingError
    init(_ error: DecodingError) { self.error = error }

    var description: String {
        func path(_ context: DecodingError.Context) -> String {
            let joined = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return joined.isEmpty ? "the top level" : joined
        }
        switch error {
        case .typeMismatch(_, let context): return "\(path(context)) has the wrong type (\(context.debugDescription))"
        case .valueNotFound(_, let context): return "\(path(context)) is null"
        case .keyNotFound(let key, let context): return "\(path(context)) lacks \(key.stringValue)"
        case .dataCorrupted(let context): return "\(path(context)) is not valid JSON"
        @unknown default: return "undecodable"
        }
    }
}
